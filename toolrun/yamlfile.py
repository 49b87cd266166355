"""The one YAML/JSON entry point: data plus the node tree, so errors can name line and column.

The C loader is used when PyYAML was built with libyaml. JSON files are read by
the same loader (JSON is YAML's flow style) after a strict ``json`` syntax check,
so both formats report positions the same way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from toolrun.errors import Location, Problem

try:
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _Loader = yaml.SafeLoader

_MERGE_TAG = "tag:yaml.org,2002:merge"

PathPart = str | int


class DocumentError(Exception):
    """The file cannot be read or parsed; ``problem`` says where."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed file: its data, its nodes (None for an empty file) and non-fatal problems."""

    file: str
    data: Any
    root: yaml.Node | None
    problems: tuple[Problem, ...] = ()

    def locate(self, path: Sequence[PathPart]) -> Location:
        """Where ``path`` (keys and indexes) is written; the nearest existing parent otherwise.

        The last mapping step points at the key itself, which is where a reader
        looks for a wrong or unknown key.
        """
        node = self.root
        if node is None:
            return Location(self.file, 1, 1)
        mark = node.start_mark
        for part in path:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                        mark = key_node.start_mark
                        node = value_node
                        break
                else:
                    break
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if 0 <= part < len(node.value):
                    node = node.value[part]
                    mark = node.start_mark
                else:
                    break
            else:
                break
        return Location(self.file, mark.line + 1, mark.column + 1)

    def value_location(self, path: Sequence[PathPart]) -> Location:
        """Where the *value* at ``path`` starts (not its key)."""
        node = self.root
        if node is None:
            return Location(self.file, 1, 1)
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node = child
        return Location(self.file, node.start_mark.line + 1, node.start_mark.column + 1)


def _child(node: yaml.Node, part: PathPart) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                return value_node  # type: ignore[no-any-return]
    elif (
        isinstance(node, yaml.SequenceNode)
        and isinstance(part, int)
        and 0 <= part < len(node.value)
    ):
        return node.value[part]  # type: ignore[no-any-return]
    return None


def format_path(path: Sequence[PathPart]) -> str:
    """``("turns", 1, "calls", 0, "input")`` → ``turns[1].calls[0].input``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class _Builder:
    """Builds Python data from nodes, noting duplicate keys (PyYAML silently keeps the last)."""

    def __init__(self, loader: yaml.SafeLoader, file: str) -> None:
        self.loader = loader
        self.file = file
        self.problems: list[Problem] = []

    def build(self, node: yaml.Node, path: tuple[PathPart, ...]) -> Any:
        if isinstance(node, yaml.MappingNode):
            if any(k.tag == _MERGE_TAG for k, _ in node.value):
                self.loader.flatten_mapping(node)
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.loader.construct_object(key_node, deep=True)
                if not isinstance(key, (str, int, float, bool)) and key is not None:
                    self.problems.append(
                        Problem(
                            _loc(self.file, key_node), format_path(path), "keys must be scalars"
                        )
                    )
                    continue
                if key in out:
                    self.problems.append(
                        Problem(
                            _loc(self.file, key_node),
                            format_path((*path, str(key))),
                            f"duplicate key {key!r}",
                        )
                    )
                out[key] = self.build(value_node, (*path, str(key)))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self.loader.construct_object(node, deep=True)


def _loc(file: str, node: yaml.Node) -> Location:
    return Location(file, node.start_mark.line + 1, node.start_mark.column + 1)


def _syntax_problem(file: str, exc: yaml.YAMLError) -> Problem:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {problem}"
    if context:
        message += f" ({context})"
    if mark is None:
        return Problem(Location(file, 1, 1), "", message)
    return Problem(Location(file, mark.line + 1, mark.column + 1), "", message)


def parse_text(text: str, file: str, *, json_syntax: bool = False) -> Document:
    """Parse YAML (or JSON, checked strictly when ``json_syntax``) into a located Document."""
    if json_syntax:
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise DocumentError(
                Problem(Location(file, exc.lineno, exc.colno), "", f"invalid JSON: {exc.msg}")
            ) from None
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return Document(file, None, None)
        builder = _Builder(loader, file)
        data = builder.build(root, ())
    except yaml.YAMLError as exc:
        raise DocumentError(_syntax_problem(file, exc)) from None
    finally:
        loader.dispose()
    return Document(file, data, root, tuple(builder.problems))


def load_document(path: Path, *, display: str | None = None) -> Document:
    """Read and parse a YAML or JSON file (JSON by its ``.json`` suffix)."""
    file = display if display is not None else str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DocumentError(Problem(None, "", f"{file}: no such file")) from None
    except IsADirectoryError:
        raise DocumentError(Problem(None, "", f"{file}: is a directory, not a file")) from None
    except OSError as exc:
        raise DocumentError(Problem(None, "", f"{file}: cannot read: {exc.strerror}")) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            Problem(Location(file, 1, 1), "", f"not UTF-8 text (byte {exc.start})")
        ) from None
    return parse_text(text, file, json_syntax=path.suffix.lower() == ".json")
