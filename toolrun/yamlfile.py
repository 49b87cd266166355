"""The one YAML/JSON entry point: data plus the node tree, so errors can name line and column.

The C loader is used when PyYAML was built with libyaml. JSON files are read by
the same loader (JSON is YAML's flow style) after a strict ``json`` syntax check,
so both formats report positions the same way.
"""

from __future__ import annotations

import bisect
import itertools
import json
import json.decoder
import os
import re
import stat
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from toolrun.errors import Location, Problem

if TYPE_CHECKING:
    import yaml
else:

    class _Yaml:
        """Stands for the yaml module until it is first used, then puts it in its place:
        a JSON plan that needs no position of a YAML node never imports it (~5 ms)."""

        def __getattr__(self, name: str) -> Any:
            import yaml as module

            globals()["yaml"] = module
            return getattr(module, name)

    yaml = _Yaml()


def _Loader(text: str) -> yaml.SafeLoader:  # named as the loader class it stands for
    """PyYAML's C loader when it was built with libyaml."""
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    return loader(text)

_MERGE_TAG = "tag:yaml.org,2002:merge"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_STR_TAG = "tag:yaml.org,2002:str"
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})

# Limits that give a file the same answer wherever it is read (validate, check, exec, hooks):
# beyond them the file is a located problem at load time, never a RecursionError later on.
MAX_DEPTH = 100  # mappings and lists nested in one another
MAX_ALIASED = 1_000_000  # values that YAML aliases may add to a document ("billion laughs")

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
    # False when no string can hold a NUL (no escape writes one): callers skip looking
    nul_possible: bool = True
    # A plan's turns left in the text (``data`` holds each as {"calls": [None, ...]}):
    # ``calls_of`` decodes one turn's calls when they are needed (parse_json's ``lean``)
    lean: bool = False
    # values that aliases added (event-built YAML): a region of a plan counts only its own
    aliased: int = 0

    def calls_of(self, turn: int) -> list[Any]:
        """The calls of turn ``turn`` of a lean document, decoded now (not kept)."""
        assert self.lean and self.json_marks is not None
        marks = self.json_marks
        value = _json_scan(marks.text, marks.values[("turns", turn, "calls")])[0]
        return value  # type: ignore[no-any-return]

    def _nodes(self) -> yaml.Node | None:
        if self.root is None and self.json_marks is not None:
            return self.json_marks.yaml_root()
        return self.root

    def _unlocated(self, path: Sequence[PathPart]) -> Location:
        """Where to point when there is no node tree: the nearest recorded parent."""
        if self.json_marks is not None:
            return self.json_marks.nearest(tuple(path))
        return Location(self.file, 1, 1)

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
            return self._unlocated(path)
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

    def item_locations(self, path: Sequence[PathPart]) -> list[Location] | None:
        """Where each item of the list at ``path`` starts (``value_location`` of each), all
        at once; None when they are not recorded (ask ``value_location``)."""
        marks = self.json_marks
        if marks is None:
            return None
        starts = marks.items.get(tuple(path))
        if starts is None:
            return None
        place = marks._location
        return [place(start) for start in starts]

    def value_location(self, path: Sequence[PathPart]) -> Location:
        """Where the *value* at ``path`` starts (not its key)."""
        marks = self.json_marks
        if marks is not None:
            found = marks.value_location(tuple(path))
            if found is not None:
                return found
        node = self._nodes()
        if node is None:
            return self._unlocated(path)
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
            _check_depth(self.file, node.start_mark, len(path) + height)
            self.aliased += size
            if self.aliased > MAX_ALIASED:
                raise _too_many_aliased(self.file, node.start_mark)
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
            result: tuple[Any, int, int] = (_construct(self.loader, node, self.file), 0, 1)
        else:
            _check_depth(self.file, node.start_mark, len(path) + 1)
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
        if any(k.tag == _MERGE_TAG for k, _ in node.value):
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
            key = _construct(self.loader, key_node, self.file)
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


def _construct(loader: yaml.SafeLoader, node: yaml.ScalarNode, file: str) -> Any:
    """A scalar's value as JSON would hold it, or a located problem.

    A tag's constructor may fail (``!!int x``); binary data, sets and the like are no JSON
    value tools and hooks could receive; a date is kept as the text written.
    """
    tag = node.tag
    if tag == _TIMESTAMP_TAG:
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


def _check_depth(file: str, mark: Any, levels: int) -> None:
    if levels > MAX_DEPTH:
        raise DocumentError(
            Problem(
                Location(file, int(mark.line) + 1, int(mark.column) + 1),
                "",
                f"nested more than {MAX_DEPTH} levels deep",
            )
        )


def _too_many_aliased(file: str, mark: Any) -> DocumentError:
    return DocumentError(
        Problem(
            Location(file, int(mark.line) + 1, int(mark.column) + 1),
            "",
            f"aliases expand to more than {MAX_ALIASED:,} values",
        )
    )


NUL_MESSAGE = "holds a NUL character (\\u0000), which no path, command or argument can"


def nul_paths(value: object, path: tuple[PathPart, ...] = ()) -> Iterator[tuple[PathPart, ...]]:
    """Where strings (keys included) hold a NUL: a path, command or argument with one cannot be
    resolved or run, so a call or a config that has one is refused when it is loaded."""
    if isinstance(value, str):
        if "\0" in value:
            yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and "\0" in key:
                yield (*path, key)
            yield from nul_paths(item, (*path, str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from nul_paths(item, (*path, i))


def _loc(file: str, node: yaml.Node) -> Location:
    return Location(file, node.start_mark.line + 1, node.start_mark.column + 1)


def _syntax_problem(file: str, exc: yaml.YAMLError, text: str) -> Problem:
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
        at = max(0, min(int(exc.position), len(text)))
        line = text.count("\n", 0, at)
        column = at - (text.rfind("\n", 0, at) + 1)
        message = f"invalid YAML: character #x{int(exc.character):04X} is not allowed: {exc.reason}"
        return Problem(Location(file, line + 1, column + 1), "", message)
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
        """Note where the value at ``index`` (valid JSON) and its shallow parts are (where
        it starts goes to ``into``, its list's items, when given); the index after it.

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
            return _json_scan(text, index)[1]
        if len(path) >= MARK_DEPTH:
            end = _json_scan(text, index)[1]
            # only a value that long, with that many brackets in it, can be too deep
            room = MAX_DEPTH - len(path)
            if (
                end - index > 2 * room
                and text.count("[", index, end) + text.count("{", index, end) > room
            ):
                _check_json_depth(text, self.file, index, end, len(path))
            return end
        index = _skip_ws(text, index + 1)
        if ch == "[":
            starts = self.items[path] = array("q")
            if text[index] == "]":
                return index + 1
            while True:
                index = self.walk(index, (*path, len(starts)), starts)
                index = _skip_ws(text, index)
                if text[index] == "]":
                    return index + 1
                index += 1  # ","
        seen: set[str] = set()
        if text[index] == "}":
            return index + 1
        while True:
            key_at = index
            key, index = _scanstring(text, index + 1)
            if key in seen:
                self.problems.append(
                    Problem(
                        self._location(key_at), format_path((*path, key)), f"duplicate key {key!r}"
                    )
                )
            seen.add(key)
            self.keys[(*path, key)] = key_at
            index = _skip_ws(text, index) + 1  # ":"
            index = self.walk(index, (*path, key))
            index = _skip_ws(text, index)
            if text[index] == "}":
                return index + 1
            index = _skip_ws(text, index + 1)  # ","


_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
# \uD800-\uDBFF not followed by \uDC00-\uDFFF, or the latter alone: no Unicode text
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
# how JSON and YAML write a NUL (neither lets one stand in a file as it is)
_NUL_ESCAPE = re.compile(r"\\(?:0|x00|u0000|U00000000)")


def _may_hold_nul(text: str) -> bool:
    return "\\" in text and _NUL_ESCAPE.search(text) is not None


_LONG_NUMBER = re.compile(r"\d{4301,}")  # longer than int() converts by default


def _json_problem(text: str, file: str, index: int, message: str) -> DocumentError:
    line = text.count("\n", 0, index)
    column = index - (text.rfind("\n", 0, index) + 1)
    return DocumentError(Problem(Location(file, line + 1, column + 1), "", message))


def _check_json_depth(text: str, file: str, start: int, end: int, levels: int) -> None:
    """DocumentError at the first bracket of ``text[start:end]`` nested beyond MAX_DEPTH
    (``levels`` are already open around it)."""
    for token in _JSON_TOKEN.finditer(text, start, end):
        ch = token.group()  # a bracket, or a whole string (skipped)
        if ch in ("[", "{"):
            levels += 1
            if levels > MAX_DEPTH:
                raise _json_problem(
                    text, file, token.start(), f"nested more than {MAX_DEPTH} levels deep"
                )
        elif ch in ("]", "}"):
            levels -= 1


def _check_json_strings(text: str, file: str) -> None:
    """DocumentError at the first string whose escapes decode to a lone surrogate."""
    if "\\ud" not in text and "\\uD" not in text:
        return  # no surrogate escape at all (str.find: far cheaper than the regex)
    if _LONE_SURROGATE.search(text) is None:
        return
    for token in _JSON_TOKEN.finditer(text):
        if token.group()[0] != '"' or _LONE_SURROGATE.search(token.group()) is None:
            continue
        value, _ = _scanstring(text, token.start() + 1)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = value[exc.start]
            raise _json_problem(
                text,
                file,
                token.start(),
                f"a string holds a lone surrogate \\u{ord(bad):04x}, which is not text"
                " (surrogates come in pairs)",
            ) from None


def _nothing(pairs: object) -> None:
    return None


# checks JSON as json.loads does (the same scanner, messages and positions) without
# keeping what it decodes: every object is dropped as soon as it is read
_check_only = json.JSONDecoder(object_pairs_hook=_nothing).decode


def parse_json(text: str, file: str, *, lean: bool = False) -> Document:
    """Parse JSON strictly, fast, with positions for its shallow levels.

    ``lean``: a plan of ``turns`` of ``calls`` is left in the text, each turn's calls
    decoded only when asked for (``Document.calls_of``): a process deciding a part of a
    big plan never holds the whole of it. Anything else is decoded as usual."""
    try:
        # the C decoder: the data, and its own messages and positions for bad input
        data = _check_only(text) if lean else json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentError(
            Problem(Location(file, exc.lineno, exc.colno), "", f"invalid JSON: {exc.msg}")
        ) from None
    except RecursionError:
        _check_json_depth(text, file, 0, len(text), 0)
        raise _json_problem(text, file, 0, f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:  # an integer too long to convert
        found = _LONG_NUMBER.search(text)
        raise _json_problem(
            text, file, found.start() if found else 0, "a number with more than 4300 digits"
        ) from None
    _check_json_strings(text, file)
    marks = _JsonMarks(text, file)
    marks.walk(0, ())
    if lean:
        data = _skeleton(marks)
        if data is None:
            data, lean = json.loads(text), False
    return Document(
        file, data, None, tuple(marks.problems), marks, _may_hold_nul(text), lean=lean
    )


def _skeleton(marks: _JsonMarks) -> dict[str, Any] | None:
    """A plan's data with each turn's calls left out (as Nones), or None when the document
    is not a mapping whose ``turns`` are each ``{"calls": [...]}`` and nothing else."""
    text = marks.text
    if marks.values.get(()) is None or text[marks.values[()]] != "{":
        return None
    turns = marks.items.get(("turns",))
    if turns is None:
        return None
    shapes: dict[int, list[str]] = {}
    for path in marks.keys:  # (each key's path, in the order written)
        if len(path) == 3 and path[0] == "turns" and isinstance(path[1], int):
            shapes.setdefault(path[1], []).append(str(path[2]))
    skeleton_turns: list[Any] = []
    for t in range(len(turns)):
        calls = marks.items.get(("turns", t, "calls"))
        if shapes.get(t) != ["calls"] or calls is None:
            return None
        skeleton_turns.append({"calls": [None] * len(calls)})
    data: dict[str, Any] = {}
    for path in marks.keys:
        if len(path) == 1:
            key = str(path[0])
            data[key] = (
                skeleton_turns if key == "turns" else _json_scan(text, marks.values[path])[0]
            )
    return data


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


#: The most plain scalars whose resolved tag one document remembers.
_RESOLVED_MAX = 4096


_TYPED_STARTS: dict[type, frozenset[str] | _Everything] = {}


def _typed_starts(loader: type) -> frozenset[str] | _Everything:
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

    def __init__(self, loader: yaml.SafeLoader, marks: _YamlMarks) -> None:
        self.raw = loader
        self.loader = cast(_EventSource, loader)
        self.marks = marks
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # value, height, size
        self.deepest = 0  # container levels reached (within the current anchor)
        self.nodes = 0
        self.aliased = 0
        #: first characters of the plain scalars an implicit resolver may type (``true``,
        #: ``1.5``, ``~``): a plain scalar starting otherwise is a string, unasked
        self.typed_starts = _typed_starts(type(loader))
        self.resolved: dict[str, str] = {}  # plain scalar -> its tag (keys repeat)

    def build(self, path: tuple[PathPart, ...], into: array[int] | None = None) -> Any:
        loader = self.loader
        event = loader.get_event()
        depth = len(path)
        if depth <= MARK_DEPTH:
            if into is None:
                self.marks.values[path] = _pos(event.start_mark)
            else:
                into.append(_pos(event.start_mark))
        self.nodes += 1
        if isinstance(event, yaml.AliasEvent):
            found = self.anchors.get(event.anchor or "")
            if found is None:
                raise _NeedNodes  # the node builder words the error
            value, height, size = found
            self._reach(event, depth + height)
            self.aliased += size
            if self.aliased > MAX_ALIASED:
                raise _too_many_aliased(self.marks.file, event.start_mark)
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
            _check_depth(self.marks.file, event.start_mark, levels)
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
        if tag == _STR_TAG:
            return event.value  # most scalars, without building a node
        if tag == _MERGE_TAG:
            raise _NeedNodes
        start: Any = event.start_mark  # a C mark: line and column, as _construct needs
        node = yaml.ScalarNode(tag, event.value, start, start, event.style)
        return _construct(self.raw, node, self.marks.file)

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
                        self.marks._location(_pos(key_event.start_mark)),
                        format_path((*path, str(key))),
                        f"duplicate key {key!r}",
                    )
                )
            child: tuple[PathPart, ...] | None = None  # (made only where it is needed)
            if shallow:
                child = (*path, str(key))
                marks.keys[child] = _pos(key_event.start_mark)
            value_event = peek()
            if type(value_event) is scalar and value_event.anchor is None:
                # a plain value (most of them): what ``build`` does for it, without the call
                get()
                if child is not None:
                    marks.values[child] = _pos(value_event.start_mark)
                self.nodes += 1
                out[key] = self._scalar(value_event)
            else:
                out[key] = self.build(child if child is not None else (*path, str(key)))


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
        builder = _EventBuilder(raw, marks)
        data = builder.build(())
        loader.get_event()  # DocumentEnd
        if not loader.check_event(yaml.StreamEndEvent):
            return None  # several documents: the node builder says so
    except _NeedNodes:
        return None
    except yaml.YAMLError as exc:
        raise DocumentError(_syntax_problem(file, exc, text)) from None
    finally:
        raw.dispose()
    return Document(
        file, data, None, tuple(marks.problems), marks, _may_hold_nul(text),
        aliased=builder.aliased,
    )  # fmt: skip


def parse_text(
    text: str, file: str, *, json_syntax: bool = False, lean: bool = False
) -> Document:
    """Parse YAML, or JSON (strictly) when ``json_syntax``, into a located Document
    (``lean``: see ``parse_json``; YAML is always decoded whole)."""
    if json_syntax:
        return parse_json(text, file, lean=lean)
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
        raise DocumentError(_syntax_problem(file, exc, text)) from None
    finally:
        loader.dispose()
    return Document(file, data, root, tuple(builder.problems), None, _may_hold_nul(text))


_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def read_text(path: Path, file: str) -> str:
    """A file's UTF-8 text (a UTF-8 BOM is dropped), or DocumentError saying why not.

    Only regular files are read: a FIFO or a device would block or never end. The file is
    opened without blocking and checked after opening, so what is read is what was checked.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise DocumentError(Problem(None, "", f"{file}: no such file")) from None
    except IsADirectoryError:
        raise DocumentError(Problem(None, "", f"{file}: is a directory, not a file")) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        reason = getattr(exc, "strerror", None) or str(exc)
        raise DocumentError(Problem(None, "", f"{file}: cannot read: {reason}")) from None
    try:
        mode = os.fstat(fd).st_mode
        for test, kind in _FILE_KINDS:
            if test(mode):
                raise DocumentError(Problem(None, "", f"{file}: is {kind}, not a file"))
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read()
    except OSError as exc:
        raise DocumentError(Problem(None, "", f"{file}: cannot read: {exc.strerror}")) from None
    finally:
        os.close(fd)
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            raise DocumentError(
                Problem(Location(file, 1, 1), "", f"{encoding} text; toolrun reads UTF-8 only")
            )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        head = raw[: exc.start]
        line = head.count(b"\n")
        column = len(head) - (head.rfind(b"\n") + 1)
        raise DocumentError(
            Problem(
                Location(file, line + 1, column + 1),
                "",
                f"not UTF-8 text (byte {exc.start})",
            )
        ) from None


def load_document(path: Path, *, display: str | None = None) -> Document:
    """Read and parse a YAML or JSON file (JSON by its ``.json`` suffix)."""
    file = display if display is not None else str(path)
    text = read_text(path, file)
    return parse_text(text, file, json_syntax=path.suffix.lower() == ".json")


@dataclass(frozen=True, slots=True)
class TurnsOutline:
    """Where a YAML plan's turns are written, read from its lines: what lets a process
    parse only the turns it decides (``region``). A guess from the text, which whoever
    parses a region checks against what the parser finds (``turns`` the last key of a
    block mapping at column 0, each turn a line ``- calls:`` at one indentation)."""

    turns_line: int  # the line of ``turns:`` (0-based)
    starts: tuple[int, ...]  # where each turn's line starts (offsets in the text)
    lines: tuple[int, ...]  # and its line (0-based)
    sizes: tuple[int, ...]  # how many calls each holds, counted from its lines

    def region(self, text: str, first: int, end: int) -> str:
        """Turns ``first`` to ``end`` as a document of their own, each line where it is in
        ``text`` (the lines before blank; the first region keeps the header instead)."""
        stop = self.starts[end] if end < len(self.starts) else len(text)
        if first == 0:
            return text[:stop]
        return "turns:" + "\n" * self.lines[first] + text[self.starts[first] : stop]


_TURNS_TAIL = re.compile(r"[ ]*(?:#[^\n]*)?(?:\n|$)")
_CONTENT_LINE = re.compile(r"^( *)([^ \n#])", re.MULTILINE)
# characters YAML takes as line breaks besides "\n": lines would not be counted alike
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")


def outline_turns(text: str) -> TurnsOutline | None:
    """The outline of a plan written as ``turns:`` at column 0, then block items
    ``- calls:`` each followed by its calls as block items; None for anything else.
    (A guess that costs a few string scans: ``TurnsOutline`` says who checks it.)"""
    if any(c in text for c in _OTHER_BREAKS) or text.startswith("%") or "\n%" in text:
        return None  # other line breaks, directives (%TAG changes what a tag means)
    at = 0 if text.startswith("turns:") else text.find("\nturns:") + 1
    if at == 0 and not text.startswith("turns:") or text.count("\nturns:", at) != 0:
        return None  # no such line, or more than one
    tail = _TURNS_TAIL.match(text, at + 6)
    if tail is None:
        return None
    head = tail.end()
    first = _CONTENT_LINE.search(text, head)
    if first is None or first.group(2) != "-":
        return None
    item = "\n" + first.group(1) + "- "
    starts = [first.start()]
    while (found := text.find(item, starts[-1])) >= 0:
        starts.append(found + 1)
    if text.count(item + "calls:", head - 1) != len(starts) or not text.startswith(
        item[1:] + "calls:", starts[0]
    ):
        return None
    nested = _CONTENT_LINE.search(text, starts[0] + 1)
    if nested is None or nested.group(2) != "-" or len(nested.group(1)) <= len(first.group(1)):
        return None
    call = "\n" + nested.group(1) + "- "
    bounds = [*starts, len(text)]
    sizes = tuple(text.count(call, bounds[t] - 1, bounds[t + 1] - 1) for t in range(len(starts)))
    line = text.count("\n", 0, starts[0])
    lines = [line]
    for a, b in itertools.pairwise(starts):
        line += text.count("\n", a, b)
        lines.append(line)
    return TurnsOutline(text.count("\n", 0, at), tuple(starts), tuple(lines), sizes)
