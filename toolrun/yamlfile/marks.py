"""Where a document's shallow values and keys are written, recorded as it is parsed.

Positions are kept down to ``turns[i].calls[j]`` (and ``permissions.allow[i]``): what a
plan's or a config's errors point at. Anything deeper is located through PyYAML's node
tree, built only when an error needs it (:meth:`JsonMarks.yaml_root`).
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import re
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from toolrun.dataclass_init import slots_builder
from toolrun.errors import Location, Problem
from toolrun.yamlfile.errors import MAX_DEPTH, at_offset
from toolrun.yamlfile.paths import PathPart, format_path

if TYPE_CHECKING:
    import yaml

MARK_DEPTH = 4

_WS = re.compile(r"[ \t\n\r]*")
#: Location(...) made the cheap way (one per call of a plan)
_new_location = slots_builder(Location)
json_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')

#: the index after the JSON value at an index, each object dropped as it is read (its
#: pairs counted: a C function, no Python frame): the walk only skips what it does not
#: record, and building each call's dicts was a fifth of that
_skip: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder(  # type: ignore[attr-defined]
    object_pairs_hook=len
).scan_once


def _skip_ws(text: str, index: int) -> int:
    if index < len(text) and text[index] not in " \t\n\r":
        return index  # the usual case, without a regex call
    match = _WS.match(text, index)
    return match.end() if match else index


def pos(mark: Any) -> int:
    """A YAML mark as ``line << 20 | column`` (how :class:`YamlMarks` keeps positions)."""
    return (int(mark.line) << 20) | min(int(mark.column), 0xFFFFF)


def check_json_depth(text: str, file: str, start: int, end: int, levels: int) -> None:
    """DocumentError at the first bracket of ``text[start:end]`` nested beyond MAX_DEPTH
    (``levels`` are already open around it)."""
    for token in JSON_TOKEN.finditer(text, start, end):
        ch = token.group()  # a bracket, or a whole string (skipped)
        if ch in ("[", "{"):
            levels += 1
            if levels > MAX_DEPTH:
                raise at_offset(
                    text, file, token.start(), f"nested more than {MAX_DEPTH} levels deep"
                )
        elif ch in ("]", "}"):
            levels -= 1


class NotJson(ValueError):
    """What :meth:`JsonMarks.walk` found where JSON has something else (at this index)."""


class JsonMarks:
    """Positions of a JSON document's shallow values and keys, found with the C scanner."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.values: dict[tuple[PathPart, ...], int] = {}
        # where each item of a shallow list starts, by the list's path: one compact array
        # per list rather than a path tuple per item (a big plan's calls were 40 MB of
        # such tuples, kept only in case an error needed one)
        self.items: dict[tuple[PathPart, ...], array[int]] = {}
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

    def locations(self, starts: Sequence[int]) -> list[Location]:
        """:meth:`_location` of each of ``starts`` (a list's items), all at once."""
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        newlines, file, find, new = self._newlines, self.file, bisect.bisect_left, _new_location
        if not newlines or (starts and max(starts) < newlines[0]):  # all on the first line
            return [new(file, 1, start + 1) for start in starts]
        out: list[Location] = []
        for start in starts:
            line = find(newlines, start)
            out.append(new(file, line + 1, start - newlines[line - 1] if line else start + 1))
        return out

    def _value_at(self, path: tuple[PathPart, ...]) -> int | None:
        found = self.values.get(path)
        if found is None and path:
            last = path[-1]
            if isinstance(last, int) and last >= 0:
                items = self.items.get(path[:-1])
                if items is not None and last < len(items):
                    return items[last]
        return found

    def key_location(self, path: tuple[PathPart, ...]) -> Location | None:
        index = self.keys.get(path) if path and isinstance(path[-1], str) else None
        if index is None:
            index = self._value_at(path)
        return self._location(index) if index is not None else None

    def value_location(self, path: tuple[PathPart, ...]) -> Location | None:
        index = self._value_at(path)
        return self._location(index) if index is not None else None

    def nearest(self, path: tuple[PathPart, ...]) -> Location:
        """The recorded value nearest to ``path``: itself or its closest parent."""
        for end in range(len(path), -1, -1):
            index = self._value_at(path[:end])
            if index is not None:
                return self._location(index)
        return Location(self.file, 1, 1)

    def yaml_root(self) -> yaml.Node | None:
        if not self._yaml:
            import yaml

            from toolrun.yamlfile.pyyaml import _Loader

            loader = _Loader(self.text)
            try:
                self._yaml.append(loader.get_single_node())
            except yaml.YAMLError:
                # valid JSON that YAML cannot read (some control characters in a string):
                # problems are then located at the nearest recorded parent
                self._yaml.append(None)
            finally:
                loader.dispose()
        return self._yaml[0]

    def walk(self, index: int, path: tuple[PathPart, ...], into: array[int] | None = None) -> int:
        """Note where the value at ``index`` and its shallow parts are (where it starts goes
        to ``into``, its list's items, when given); the index after it. What is not JSON
        raises NotJson, or the scanner's own error (a ValueError, StopIteration where no
        value starts), or IndexError at the end of the text: the walk checks every
        character it steps over and the scanner each value it skips.

        The values are not kept: ``json.loads`` builds the document's data, whose
        repeated keys share one string, where values decoded a call at a time would each
        have their own copies (a quarter of a big plan's memory)."""
        text = self.text
        index = _skip_ws(text, index)
        if into is None:
            self.values[path] = index
        else:
            into.append(index)
        ch = text[index]
        if ch not in "[{":
            return json_scan(text, index)[1]
        if len(path) >= MARK_DEPTH:
            end = _skip(text, index)[1]
            # only a value that long, with that many brackets in it, can be too deep
            room = MAX_DEPTH - len(path)
            if (
                end - index > 2 * room
                and text.count("[", index, end) + text.count("{", index, end) > room
            ):
                check_json_depth(text, self.file, index, end, len(path))
            return end
        index = _skip_ws(text, index + 1)
        if ch == "[":
            starts = self.items[path] = array("q")
            if text[index] == "]":
                return index + 1
            if len(path) + 1 >= MARK_DEPTH:
                return self._items(index, len(path) + 1, starts)
            while True:
                index = self.walk(index, (*path, len(starts)), starts)
                index = _skip_ws(text, index)
                if text[index] == "]":
                    return index + 1
                if text[index] != ",":
                    raise NotJson(index)
                index += 1
        seen: set[str] = set()
        if text[index] == "}":
            return index + 1
        while True:
            key_at = index
            if text[index] != '"':
                raise NotJson(index)
            key, index = scanstring(text, index + 1)
            if key in seen:
                self.problems.append(
                    Problem(
                        self._location(key_at), format_path((*path, key)), f"duplicate key {key!r}"
                    )
                )
            seen.add(key)
            self.keys[(*path, key)] = key_at
            index = _skip_ws(text, index)
            if text[index] != ":":
                raise NotJson(index)
            index = self.walk(index + 1, (*path, key))
            index = _skip_ws(text, index)
            if text[index] == "}":
                return index + 1
            if text[index] != ",":
                raise NotJson(index)
            index = _skip_ws(text, index + 1)


    def _items(self, index: int, depth: int, starts: array[int]) -> int:
        """:meth:`walk` of the items of a list at ``index`` whose items are ``depth`` deep,
        past what is recorded: each one's start noted, then skipped by the scanner (a
        plan's calls: one loop, without a call and a path per item)."""
        text = self.text
        room = MAX_DEPTH - depth
        scan, spaces, add = _skip, _WS.match, starts.append
        while True:
            if text[index] in " \t\n\r":  # (``_skip_ws`` inline: once or twice an item)
                index = spaces(text, index).end()  # type: ignore[union-attr]
            add(index)
            end = scan(text, index)[1]
            if (
                end - index > 2 * room
                and text[index] in "[{"
                and text.count("[", index, end) + text.count("{", index, end) > room
            ):
                check_json_depth(text, self.file, index, end, depth)
            if text[end] in " \t\n\r":
                end = spaces(text, end).end()  # type: ignore[union-attr]
            if text[end] == "]":
                return end + 1
            if text[end] != ",":
                raise NotJson(end)
            index = end + 1


class YamlMarks(JsonMarks):
    """Positions of a YAML document's shallow values and keys, as ``line << 20 | column``."""

    def _location(self, index: int) -> Location:
        return Location(self.file, (index >> 20) + 1, (index & 0xFFFFF) + 1)

    def locations(self, starts: Sequence[int]) -> list[Location]:
        file, new = self.file, _new_location
        return [new(file, (start >> 20) + 1, (start & 0xFFFFF) + 1) for start in starts]
