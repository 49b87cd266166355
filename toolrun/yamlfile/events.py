"""YAML built straight from the C parser's events, with only shallow positions kept.

Composing PyYAML's node tree first would hold every node of a big plan in memory next to
its data; this builder keeps the positions of the shallow levels (:mod:`toolrun.yamlfile.
marks`) and leaves to the node builder (:mod:`toolrun.yamlfile.nodes`) what it does not
read itself: merge keys, complex keys, several documents, and the wording of their errors.
"""

from __future__ import annotations

from array import array
from typing import Any, Protocol, cast

import yaml

from toolrun.errors import Problem
from toolrun.yamlfile.document import Document
from toolrun.yamlfile.errors import (
    MAX_ALIASED,
    DocumentError,
    check_depth,
    syntax_problem,
    too_many_aliased,
)
from toolrun.yamlfile.marks import MARK_DEPTH, YamlMarks, pos
from toolrun.yamlfile.nodes import MERGE_TAG, STR_TAG, construct
from toolrun.yamlfile.paths import PathPart, format_path, may_hold_nul
from toolrun.yamlfile.pyyaml import _Loader


class _NeedNodes(Exception):
    """A construct the event builder leaves to the node builder (merge keys, odd keys)."""


class _EventSource(Protocol):
    """The parts of a (C)SafeLoader the event builder uses (the stubs leave them untyped)."""

    yaml_constructors: dict[Any, Any]

    def get_event(self) -> Any: ...

    def peek_event(self) -> Any: ...

    def check_event(self, *choices: type) -> bool: ...

    def resolve(self, kind: type, value: str, implicit: Any) -> str: ...


#: The most plain scalars whose resolved tag one document remembers.
_RESOLVED_MAX = 4096


_TYPED_STARTS: dict[type, frozenset[str] | _Everything] = {}


def typed_starts(loader: type) -> frozenset[str] | _Everything:
    """The first characters for which ``loader``'s resolver may give a plain scalar a tag
    other than str; everything when a resolver matches any first character or a path
    resolver is registered (then every scalar is resolved as PyYAML would)."""
    found = _TYPED_STARTS.get(loader)
    if found is None:
        implicit: dict[Any, Any] = getattr(loader, "yaml_implicit_resolvers", {})
        if None in implicit or getattr(loader, "yaml_path_resolvers", None):
            found = _Everything()
        else:
            found = frozenset(k for k in implicit if k)
        _TYPED_STARTS[loader] = found
    return found


class _Everything:
    def __contains__(self, item: object) -> bool:
        return True


class _EventBuilder:
    """Builds data straight from the parser's events, keeping only shallow positions.

    Composing the node tree first would hold every node of a big plan in memory
    next to its data (over 500 MB for 100,000 calls); the tree is built later
    only if an error deeper than the recorded levels needs to be located.
    Depth and alias expansion are bounded as in :class:`_Builder`.
    """

    def __init__(self, loader: yaml.SafeLoader, marks: YamlMarks) -> None:
        self.raw = loader
        self.loader = cast(_EventSource, loader)
        self.marks = marks
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # value, height, size
        self.deepest = 0  # container levels reached (within the current anchor)
        self.nodes = 0
        self.aliased = 0
        #: first characters of the plain scalars an implicit resolver may type (``true``,
        #: ``1.5``, ``~``): a plain scalar starting otherwise is a string, unasked
        self.typed_starts = typed_starts(type(loader))
        self.resolved: dict[str, str] = {}  # plain scalar -> its tag (keys repeat)

    def build(self, path: tuple[PathPart, ...], into: array[int] | None = None) -> Any:
        loader = self.loader
        event = loader.get_event()
        depth = len(path)
        if depth <= MARK_DEPTH:
            if into is None:
                self.marks.values[path] = pos(event.start_mark)
            else:
                into.append(pos(event.start_mark))
        self.nodes += 1
        if isinstance(event, yaml.AliasEvent):
            found = self.anchors.get(event.anchor or "")
            if found is None:
                raise _NeedNodes  # the node builder words the error
            value, height, size = found
            self._reach(event, depth + height)
            self.aliased += size
            if self.aliased > MAX_ALIASED:
                raise too_many_aliased(self.marks.file, event.start_mark)
            return value
        anchor = event.anchor
        if anchor is not None:
            outer, self.deepest = self.deepest, depth
            first = self.nodes - 1 + self.aliased  # values so far, aliases expanded
        if isinstance(event, yaml.ScalarEvent):
            value = self._scalar(event)
        elif isinstance(event, yaml.SequenceStartEvent):
            if depth >= self.deepest:
                self._reach(event, depth + 1)
            items: list[Any] = []
            starts: array[int] | None = None
            if depth < MARK_DEPTH:
                starts = self.marks.items[path] = array("q")
            while not loader.check_event(yaml.SequenceEndEvent):
                items.append(self.build((*path, len(items)), starts))
            loader.get_event()
            value = items
        elif isinstance(event, yaml.MappingStartEvent):
            if depth >= self.deepest:
                self._reach(event, depth + 1)
            value = self._mapping(path, event)
        else:  # pragma: no cover - the parser guarantees one of the above
            raise _NeedNodes
        if anchor is not None:
            size = self.nodes + self.aliased - first
            self.anchors[anchor] = (value, self.deepest - depth, size)
            self.deepest = max(outer, self.deepest)
        return value

    def _reach(self, event: Any, levels: int) -> None:
        if levels > self.deepest:
            check_depth(self.marks.file, event.start_mark, levels)
            self.deepest = levels

    def _scalar(self, event: yaml.ScalarEvent) -> Any:
        tag = event.tag
        if tag is None and not event.implicit[0]:
            # quoted, untagged: resolved as a string without asking the resolver (which,
            # not asked to match a plain scalar's patterns, gives the string tag)
            return event.value
        if tag is None or tag == "!":
            value = event.value
            if tag is None and value and value[0] not in self.typed_starts:
                return value  # a plain scalar no implicit type can match: a string
            tag = self.resolved.get(value) if tag is None else None
            if tag is None:
                tag = self.loader.resolve(yaml.ScalarNode, value, event.implicit)
                if event.tag is None and len(self.resolved) < _RESOLVED_MAX:
                    self.resolved[value] = tag
        if tag == STR_TAG:
            return event.value  # most scalars, without building a node
        if tag == MERGE_TAG:
            raise _NeedNodes
        start: Any = event.start_mark  # a C mark: line and column, as _construct needs
        node = yaml.ScalarNode(tag, event.value, start, start, event.style)
        return construct(self.raw, node, self.marks.file)

    def _mapping(self, path: tuple[PathPart, ...], start: yaml.Event) -> dict[Any, Any]:
        loader = self.loader
        get, peek = loader.get_event, loader.peek_event
        marks = self.marks
        scalar = yaml.ScalarEvent
        shallow = len(path) < MARK_DEPTH  # (a child is marked at MARK_DEPTH or less)
        out: dict[Any, Any] = {}
        while True:
            key_event = get()
            if type(key_event) is not scalar:
                if type(key_event) is yaml.MappingEndEvent:
                    return out
                raise _NeedNodes  # complex keys: let the node builder report them
            key = self._scalar(key_event)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise _NeedNodes
            if key in out:
                self.marks.problems.append(
                    Problem(
                        self.marks._location(pos(key_event.start_mark)),
                        format_path((*path, str(key))),
                        f"duplicate key {key!r}",
                    )
                )
            child: tuple[PathPart, ...] | None = None  # (made only where it is needed)
            if shallow:
                child = (*path, str(key))
                marks.keys[child] = pos(key_event.start_mark)
            value_event = peek()
            if type(value_event) is scalar and value_event.anchor is None:
                # a plain value (most of them): what ``build`` does for it, without the call
                get()
                if child is not None:
                    marks.values[child] = pos(value_event.start_mark)
                self.nodes += 1
                out[key] = self._scalar(value_event)
            else:
                out[key] = self.build(child if child is not None else (*path, str(key)))


def parse_events(text: str, file: str) -> Document | None:
    """The event-built Document, or None when the node builder must do it."""
    raw = _Loader(text)
    loader = cast(_EventSource, raw)
    marks = YamlMarks(text, file)
    try:
        loader.get_event()  # StreamStart
        if loader.check_event(yaml.StreamEndEvent):
            return Document(file, None, None)
        loader.get_event()  # DocumentStart
        builder = _EventBuilder(raw, marks)
        data = builder.build(())
        loader.get_event()  # DocumentEnd
        if not loader.check_event(yaml.StreamEndEvent):
            return None  # several documents: the node builder says so
    except _NeedNodes:
        return None
    except yaml.YAMLError as exc:
        raise DocumentError(syntax_problem(file, exc, text)) from None
    finally:
        raw.dispose()
    return Document(
        file, data, None, tuple(marks.problems), marks, may_hold_nul(text),
        aliased=builder.aliased,
    )  # fmt: skip
