"""The one YAML/JSON entry point: data plus the node tree, so errors can name line and column.

The C loader is used when PyYAML was built with libyaml. JSON files are read by
the same loader (JSON is YAML's flow style) after a strict ``json`` syntax check,
so both formats report positions the same way.
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

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
    """A parsed file: its data, its nodes (None for an empty file) and non-fatal problems.

    A JSON document is read by the C ``json`` scanner and knows the positions of
    its first few levels (``json_marks``); anything deeper is located through
    the YAML node tree, built only when an error needs it.
    """

    file: str
    data: Any
    root: yaml.Node | None
    problems: tuple[Problem, ...] = ()
    json_marks: _JsonMarks | None = None

    def _nodes(self) -> yaml.Node | None:
        if self.root is None and self.json_marks is not None:
            return self.json_marks.yaml_root()
        return self.root

    def locate(self, path: Sequence[PathPart]) -> Location:
        """Where ``path`` (keys and indexes) is written; the nearest existing parent otherwise.

        The last mapping step points at the key itself, which is where a reader
        looks for a wrong or unknown key.
        """
        marks = self.json_marks
        if marks is not None:
            found = marks.key_location(tuple(path))
            if found is not None:
                return found
        node = self._nodes()
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
        marks = self.json_marks
        if marks is not None:
            found = marks.value_location(tuple(path))
            if found is not None:
                return found
        node = self._nodes()
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


_WS = re.compile(r"[ \t\n\r]*")
_json_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def _skip_ws(text: str, index: int) -> int:
    if index < len(text) and text[index] not in " \t\n\r":
        return index  # the usual case, without a regex call
    match = _WS.match(text, index)
    return match.end() if match else index
# Positions are kept down to turns[i].calls[j] (and permissions.allow[i]); anything
# deeper is located through the node tree, built only when an error needs it.
MARK_DEPTH = 4


class _JsonMarks:
    """Positions of a JSON document's shallow values and keys, found with the C scanner."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.values: dict[tuple[PathPart, ...], int] = {}
        self.keys: dict[tuple[PathPart, ...], int] = {}
        self.problems: list[Problem] = []
        self._newlines: list[int] | None = None
        self._yaml: list[yaml.Node | None] = []

    def _location(self, index: int) -> Location:
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        line = bisect.bisect_left(self._newlines, index)
        start = self._newlines[line - 1] + 1 if line else 0
        return Location(self.file, line + 1, index - start + 1)

    def key_location(self, path: tuple[PathPart, ...]) -> Location | None:
        index = self.keys.get(path) if path and isinstance(path[-1], str) else None
        if index is None:
            index = self.values.get(path)
        return self._location(index) if index is not None else None

    def value_location(self, path: tuple[PathPart, ...]) -> Location | None:
        index = self.values.get(path)
        return self._location(index) if index is not None else None

    def yaml_root(self) -> yaml.Node | None:
        if not self._yaml:
            loader = _Loader(self.text)
            try:
                self._yaml.append(loader.get_single_node())
            finally:
                loader.dispose()
        return self._yaml[0]

    def walk(self, index: int, path: tuple[PathPart, ...]) -> tuple[Any, int]:
        """Decode the value at ``index`` (valid JSON), noting where things are."""
        text = self.text
        index = _skip_ws(text, index)
        self.values[path] = index
        ch = text[index]
        if len(path) >= MARK_DEPTH or ch not in "[{":
            return _json_scan(text, index)
        index = _skip_ws(text, index + 1)
        if ch == "[":
            items: list[Any] = []
            if text[index] == "]":
                return items, index + 1
            while True:
                value, index = self.walk(index, (*path, len(items)))
                items.append(value)
                index = _skip_ws(text, index)
                if text[index] == "]":
                    return items, index + 1
                index += 1  # ","
        out: dict[str, Any] = {}
        if text[index] == "}":
            return out, index + 1
        while True:
            key_at = index
            key, index = _scanstring(text, index + 1)
            if key in out:
                self.problems.append(
                    Problem(self._location(key_at), format_path((*path, key)), f"duplicate key {key!r}")
                )
            self.keys[(*path, key)] = key_at
            index = _skip_ws(text, index) + 1  # ":"
            out[key], index = self.walk(index, (*path, key))
            index = _skip_ws(text, index)
            if text[index] == "}":
                return out, index + 1
            index = _skip_ws(text, index + 1)  # ","


def parse_json(text: str, file: str) -> Document:
    """Parse JSON strictly, fast, with positions for its shallow levels."""
    try:
        json.loads(text)  # the C decoder's own messages and positions for bad input
    except json.JSONDecodeError as exc:
        raise DocumentError(
            Problem(Location(file, exc.lineno, exc.colno), "", f"invalid JSON: {exc.msg}")
        ) from None
    marks = _JsonMarks(text, file)
    data, _ = marks.walk(0, ())
    return Document(file, data, None, tuple(marks.problems), marks)


class _YamlMarks(_JsonMarks):
    """Positions of a YAML document's shallow values and keys, as ``line << 20 | column``."""

    def _location(self, index: int) -> Location:
        return Location(self.file, (index >> 20) + 1, (index & 0xFFFFF) + 1)


class _NeedNodes(Exception):
    """A construct the event builder leaves to the node builder (merge keys, odd keys)."""


def _pos(mark: Any) -> int:
    return (int(mark.line) << 20) | min(int(mark.column), 0xFFFFF)


class _EventSource(Protocol):
    """The parts of a (C)SafeLoader the event builder uses (the stubs leave them untyped)."""

    yaml_constructors: dict[Any, Any]

    def get_event(self) -> Any: ...

    def peek_event(self) -> Any: ...

    def check_event(self, *choices: type) -> bool: ...

    def resolve(self, kind: type, value: str, implicit: Any) -> str: ...


class _EventBuilder:
    """Builds data straight from the parser's events, keeping only shallow positions.

    Composing the node tree first would hold every node of a big plan in memory
    next to its data (over 500 MB for 100,000 calls); the tree is built later
    only if an error deeper than the recorded levels needs to be located.
    """

    def __init__(self, loader: yaml.SafeLoader, marks: _YamlMarks) -> None:
        self.loader = cast(_EventSource, loader)
        self.marks = marks
        self.anchors: dict[str, Any] = {}
        self.constructors = loader.yaml_constructors

    def build(self, path: tuple[PathPart, ...]) -> Any:
        loader = self.loader
        event = loader.get_event()
        if len(path) <= MARK_DEPTH:
            self.marks.values[path] = _pos(event.start_mark)
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in self.anchors:
                raise _NeedNodes  # the node builder words the error
            return self.anchors[event.anchor]
        if isinstance(event, yaml.ScalarEvent):
            value = self._scalar(event)
        elif isinstance(event, yaml.SequenceStartEvent):
            items: list[Any] = []
            while not loader.check_event(yaml.SequenceEndEvent):
                items.append(self.build((*path, len(items))))
            loader.get_event()
            value = items
        elif isinstance(event, yaml.MappingStartEvent):
            value = self._mapping(path, event)
        else:  # pragma: no cover - the parser guarantees one of the above
            raise _NeedNodes
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self.anchors[anchor] = value
        return value

    def _scalar(self, event: yaml.ScalarEvent) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == "tag:yaml.org,2002:merge":
            raise _NeedNodes
        node = yaml.ScalarNode(tag, event.value, style=event.style)
        constructor = self.constructors.get(tag)
        if constructor is None:  # an unknown tag: the node builder reports it with its place
            raise _NeedNodes
        return constructor(self.loader, node)

    def _mapping(self, path: tuple[PathPart, ...], start: yaml.Event) -> dict[Any, Any]:
        loader = self.loader
        out: dict[Any, Any] = {}
        while not loader.check_event(yaml.MappingEndEvent):
            key_event = loader.peek_event()
            if not isinstance(key_event, yaml.ScalarEvent):
                raise _NeedNodes  # complex keys: let the node builder report them
            loader.get_event()
            key = self._scalar(key_event)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise _NeedNodes
            child = (*path, str(key))
            if key in out:
                self.marks.problems.append(
                    Problem(
                        self.marks._location(_pos(key_event.start_mark)),
                        format_path(child),
                        f"duplicate key {key!r}",
                    )
                )
            if len(child) <= MARK_DEPTH:
                self.marks.keys[child] = _pos(key_event.start_mark)
            out[key] = self.build(child)
        loader.get_event()
        return out


def _parse_yaml_events(text: str, file: str) -> Document | None:
    """The event-built Document, or None when the node builder must do it."""
    raw = _Loader(text)
    loader = cast(_EventSource, raw)
    marks = _YamlMarks(text, file)
    try:
        loader.get_event()  # StreamStart
        if loader.check_event(yaml.StreamEndEvent):
            return Document(file, None, None)
        loader.get_event()  # DocumentStart
        data = _EventBuilder(raw, marks).build(())
        loader.get_event()  # DocumentEnd
        if not loader.check_event(yaml.StreamEndEvent):
            return None  # several documents: the node builder says so
    except _NeedNodes:
        return None
    except yaml.YAMLError as exc:
        raise DocumentError(_syntax_problem(file, exc)) from None
    finally:
        raw.dispose()
    return Document(file, data, None, tuple(marks.problems), marks)


def parse_text(text: str, file: str, *, json_syntax: bool = False) -> Document:
    """Parse YAML, or JSON (strictly) when ``json_syntax``, into a located Document."""
    if json_syntax:
        return parse_json(text, file)
    fast = _parse_yaml_events(text, file)
    if fast is not None:
        return fast
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
