"""YAML through PyYAML's node tree: what reads every construct (merge keys, complex keys,
several documents), and words the errors the faster builders leave to it.

Scalars are constructed here for every YAML builder (:func:`construct`): only JSON values.
"""

from __future__ import annotations

from typing import Any

import yaml

from toolrun.errors import Location, Problem
from toolrun.yamlfile.document import Document
from toolrun.yamlfile.errors import (
    MAX_ALIASED,
    DocumentError,
    check_depth,
    syntax_problem,
    too_many_aliased,
)
from toolrun.yamlfile.paths import PathPart, format_path, may_hold_nul
from toolrun.yamlfile.pyyaml import _Loader

MERGE_TAG = "tag:yaml.org,2002:merge"
TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
STR_TAG = "tag:yaml.org,2002:str"
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def _loc(file: str, node: yaml.Node) -> Location:
    return Location(file, node.start_mark.line + 1, node.start_mark.column + 1)


class _Builder:
    """Builds Python data from nodes, noting duplicate keys (PyYAML silently keeps the last).

    Aliases share the value built for their anchor (so a "billion laughs" costs nothing to
    build); the depth and size they add are counted, and an alias inside its own anchor
    (a recursive structure) is a located problem.
    """

    def __init__(self, loader: yaml.SafeLoader, file: str) -> None:
        self.loader = loader
        self.file = file
        self.problems: list[Problem] = []
        self.built: dict[int, tuple[Any, int, int]] = {}  # id(node) -> value, height, size
        self.open: set[int] = set()
        self.aliased = 0

    def build(self, node: yaml.Node, path: tuple[PathPart, ...]) -> Any:
        return self._build(node, path)[0]

    def _build(self, node: yaml.Node, path: tuple[PathPart, ...]) -> tuple[Any, int, int]:
        """(value, container levels, values) of ``node``."""
        key = id(node)
        found = self.built.get(key)
        if found is not None:  # an alias: the anchor's value again
            _, height, size = found
            check_depth(self.file, node.start_mark, len(path) + height)
            self.aliased += size
            if self.aliased > MAX_ALIASED:
                raise too_many_aliased(self.file, node.start_mark)
            return found
        if key in self.open:
            raise DocumentError(
                Problem(
                    _loc(self.file, node),
                    format_path(path),
                    "an alias inside its own anchor (a recursive structure) is not supported",
                )
            )
        if isinstance(node, yaml.ScalarNode):
            result: tuple[Any, int, int] = (construct(self.loader, node, self.file), 0, 1)
        else:
            check_depth(self.file, node.start_mark, len(path) + 1)
            self.open.add(key)
            try:
                result = self._collection(node, path)
            finally:
                self.open.discard(key)
        self.built[key] = result
        return result

    def _collection(self, node: yaml.Node, path: tuple[PathPart, ...]) -> tuple[Any, int, int]:
        height = size = 0
        if isinstance(node, yaml.SequenceNode):
            items: list[Any] = []
            for i, item in enumerate(node.value):
                value, h, n = self._build(item, (*path, i))
                items.append(value)
                height, size = max(height, h), size + n
            return items, height + 1, size + 1
        assert isinstance(node, yaml.MappingNode)
        if any(k.tag == MERGE_TAG for k, _ in node.value):
            try:
                self.loader.flatten_mapping(node)
            except RecursionError:  # a mapping merged into itself
                raise DocumentError(
                    Problem(_loc(self.file, node), format_path(path), "a recursive merge (<<)")
                ) from None
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                self.problems.append(
                    Problem(_loc(self.file, key_node), format_path(path), "keys must be scalars")
                )
                continue
            key = construct(self.loader, key_node, self.file)
            if key in out:
                self.problems.append(
                    Problem(
                        _loc(self.file, key_node),
                        format_path((*path, str(key))),
                        f"duplicate key {key!r}",
                    )
                )
            out[key], h, n = self._build(value_node, (*path, str(key)))
            height, size = max(height, h), size + n
        return out, height + 1, size + 1


def _short_tag(tag: str) -> str:
    return "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org") else tag


def construct(loader: yaml.SafeLoader, node: yaml.ScalarNode, file: str) -> Any:
    """A scalar's value as JSON would hold it, or a located problem.

    A tag's constructor may fail (``!!int x``); binary data, sets and the like are no JSON
    value tools and hooks could receive; a date is kept as the text written.
    """
    tag = node.tag
    if tag == TIMESTAMP_TAG:
        return node.value
    constructor = loader.yaml_constructors.get(tag)
    where = Location(file, node.start_mark.line + 1, node.start_mark.column + 1)
    if constructor is None:
        message = f"invalid YAML: could not determine a constructor for the tag {tag!r}"
        raise DocumentError(Problem(where, "", message))
    try:
        value = constructor(loader, node)
    except (ValueError, TypeError, LookupError, ArithmeticError, yaml.YAMLError) as exc:
        detail = getattr(exc, "problem", None) or str(exc)
        raise DocumentError(
            Problem(where, "", f"cannot read {node.value[:40]!r} as {_short_tag(tag)}: {detail}")
        ) from None
    if type(value) not in _JSON_SCALARS:
        raise DocumentError(
            Problem(where, "", f"{_short_tag(tag)} values are not supported: only JSON values are")
        )
    return value


def parse_nodes(text: str, file: str) -> Document:
    """The Document built from PyYAML's node tree, kept for locating errors."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return Document(file, None, None)
        builder = _Builder(loader, file)
        data = builder.build(root, ())
    except yaml.YAMLError as exc:
        raise DocumentError(syntax_problem(file, exc, text)) from None
    finally:
        loader.dispose()
    return Document(file, data, root, tuple(builder.problems), None, may_hold_nul(text))
