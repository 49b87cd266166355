"""A fast path for the YAML most plans and configs are written in: one line per key or item.

PyYAML's C parser hands Python an event object (and its marks) per token: for 10,000
calls that is over 90 ms before any data is built, four times what the whole JSON path
costs. Most YAML files use a small part of the language: block mappings and sequences,
one ``key: value`` or ``- value`` per line, values plain, quoted on one line, or a JSON
flow collection. This module reads exactly that part, line by line, and gives what the
event builder (:mod:`toolrun.yamlfile.events`) gives for it: the same data, the same
positions (line and column of the same keys and values) and no problems.

Anything else -- a tab, an anchor, an alias, a tag, a block scalar, a multi-line scalar,
a complex or quoted key, an escape, a duplicate key, a dedent no block opened, a value that
a constructor refuses, a null written as nothing -- returns None before any result is
given, and the event builder reads the file (and words its errors) as it always did. So
this path only ever answers for a file the other reads without a problem, and answers the
same (a differential test holds the two equal on generated files).

PyYAML itself is imported only for a plain scalar that may be typed otherwise than as a
word (:data:`DEFAULT_WORDS`: ``true``, ``null``...) or a decimal (``12``, ``1.5``): until
then no resolver can have been registered, so the default one's first characters
(:data:`DEFAULT_TYPED_STARTS`) say which scalars are strings, without a regex per scalar.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from array import array
from typing import Any

from toolrun.yamlfile.document import Document
from toolrun.yamlfile.errors import MAX_DEPTH, DocumentError
from toolrun.yamlfile.marks import MARK_DEPTH, JsonMarks, YamlMarks
from toolrun.yamlfile.paths import PathPart, may_hold_nul

#: the first characters of plain scalars PyYAML's default resolver may type (a test holds
#: this equal to what ``yaml.CSafeLoader`` registers)
DEFAULT_TYPED_STARTS = frozenset("!&*+-.0123456789<=FNOTYfnoty~")

# each line: indentation, a ``- `` item, a plain ``key:`` and the blanks after it, the rest
# (possessive: nothing is matched again, a third faster)
_LINES = re.compile(
    r"^( *+)(-(?: +|$))?+(?:([A-Za-z0-9_][\w.\-/$]*+):( +|$))?+(.*)", re.MULTILINE
)
# what a line may hold: no tab, no other line break, no BOM, nothing PyYAML's reader refuses
_OUTSIDE_PATTERN = (
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
# the same, for a text of ASCII only: compiling the whole class takes 10 ms (every start
# that reads a YAML config paid it), this one a twentieth of that
_OUTSIDE_ASCII = re.compile("[^\n\x20-\x7e]")
# a plain scalar may not start with these (indicators), nor with "- ", "? ", ": "
_NOT_PLAIN_START = frozenset("]}#&*!|>%@`,")
# first characters after which a value is more than a plain string (quotes, flows, those)
_SPECIAL = frozenset("\"'[{?:") | _NOT_PLAIN_START


def _outside(text: str) -> bool:
    """Whether ``text`` holds a character a line of this module's YAML may not."""
    if text.isascii():
        return _OUTSIDE_ASCII.search(text) is not None
    return _outside_any().search(text) is not None


@functools.cache
def _outside_any() -> re.Pattern[str]:
    return re.compile(_OUTSIDE_PATTERN)


class _Fallback(Exception):
    """The file steps outside the part this module reads: the event builder reads it."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Fallback  # the event builder reports each duplicate, where it is
    return out


def _refuse_constant(name: str) -> Any:
    raise _Fallback  # NaN, Infinity: JSON's, which YAML reads as strings


def _float(text: str) -> float:
    """A JSON number with a fraction or an exponent (the scanner hands those over): one
    with an exponent is left to the parser (YAML 1.1 reads 1e5 as a string). (Asked of
    the numbers alone: a search of every line for one cost a quarter of the parse.)"""
    if "e" in text or "E" in text:
        raise _Fallback
    return float(text)


_flow_scan = json.JSONDecoder(
    object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant, parse_float=_float
).scan_once  # type: ignore[attr-defined]


#: what PyYAML's default resolver and constructors make of the plain scalars that start
#: with a letter and are not strings (a test holds this equal to what PyYAML does)
DEFAULT_WORDS: dict[str, Any] = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("null", "Null", "NULL", "~")),
}
#: the first characters of those words: a plain scalar starting with one of these is a
#: string unless it is a word (the default resolvers for them are bool's and null's only)
WORD_STARTS = frozenset("FNOTYfnoty~")
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_NUMBER_STARTS = frozenset("0123456789-")
#: decimals as people write them (``12``, ``-3``, ``1.5``): what PyYAML's int and float
#: resolvers match and its constructors give as int() and float() of the text
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?")


def _defaults_hold() -> bool:
    """Whether PyYAML still types plain scalars as this module assumes: no resolver for
    every scalar or by path, the words' first characters typed as bool and null only, the
    digits' and "-" as numbers and dates only, and its own constructors for these (true
    until PyYAML is imported: nothing could have changed them before)."""
    yaml = sys.modules.get("yaml")
    if yaml is None:
        return True
    loader = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    implicit: dict[Any, list[tuple[str, Any]]] = loader.yaml_implicit_resolvers
    if None in implicit or getattr(loader, "yaml_path_resolvers", None):
        return False
    if frozenset(k for k in implicit if k) != DEFAULT_TYPED_STARTS:
        return False
    for first, resolvers in implicit.items():
        if first in WORD_STARTS:
            allowed: tuple[str, ...] = (_BOOL_TAG, _NULL_TAG)
        elif first in _NUMBER_STARTS:
            allowed = (_INT_TAG, _FLOAT_TAG, _TIMESTAMP_TAG)
        else:
            continue
        if any(tag not in allowed for tag, _ in resolvers):
            return False
    own = yaml.constructor.SafeConstructor
    return all(
        loader.yaml_constructors.get(tag) is own.yaml_constructors.get(tag)
        for tag in (_BOOL_TAG, _NULL_TAG, _INT_TAG, _FLOAT_TAG)
    )


class _Scalars:
    """Plain scalars' values, typed as PyYAML's resolver and constructors type them: those
    that start as a word from :data:`DEFAULT_WORDS`, the others (numbers, dates) by PyYAML
    itself, imported for the first of them."""

    def __init__(self) -> None:
        self.loader: Any = None
        self.known: dict[str, Any] = {}

    def typed(self, value: str) -> Any:
        found = self.known.get(value, self)
        if found is not self:
            return found
        import yaml

        from toolrun.yamlfile.nodes import STR_TAG, construct
        from toolrun.yamlfile.pyyaml import _Loader

        if self.loader is None:
            self.loader = _Loader("")
            if not _defaults_hold():
                raise _Fallback  # a resolver came with the import of PyYAML
        tag = self.loader.resolve(yaml.ScalarNode, value, (True, False))
        if tag == STR_TAG:
            result: Any = value
        else:
            mark = yaml.Mark("", 0, 0, 0, None, 0)
            try:
                result = construct(self.loader, yaml.ScalarNode(tag, value, mark, mark), "")
            except DocumentError:
                raise _Fallback from None  # the event builder says where and why
        if len(self.known) < 4096:
            self.known[value] = result
        return result

    def close(self) -> None:
        if self.loader is not None:
            self.loader.dispose()


def _flow_marks(marks: YamlMarks, rest: str, path: tuple[PathPart, ...], place: int) -> None:
    """Record the places inside a JSON flow collection written at ``place`` (as the event
    builder records them: the same paths, the first character of each value and key)."""
    if (place & 0xFFFFF) + len(rest) >= 0xFFFFF:
        raise _Fallback  # a column past what a place holds
    found = JsonMarks(rest, marks.file)
    found.walk(0, path)  # (the walk's depths are the event builder's: MARK_DEPTH)
    del found.values[path]  # the caller records where the collection itself starts
    marks.values.update((k, place + v) for k, v in found.values.items())
    marks.keys.update((k, place + v) for k, v in found.keys.items())
    for k, starts in found.items.items():
        marks.items[k] = array("q", [place + v for v in starts])


def _tail_ok(rest: str, end: int) -> bool:
    """Only blanks, then perhaps a comment, after a value that ends at ``end``."""
    tail = rest[end:]
    if not tail:
        return True
    stripped = tail.lstrip(" ")
    return not stripped or (stripped[0] == "#" and len(stripped) < len(tail))


def parse_block(text: str, file: str) -> Document | None:
    """The Document the event builder would give for ``text``, or None: let it read it."""
    if _outside(text) or not _defaults_hold():
        return None
    if len(text) >= 0xFFFFF and max(map(len, text.split("\n"))) >= 0xFFFFF:
        return None  # a column past what a place holds (the events clamp it)
    scalars = _Scalars()
    try:
        return _parse(text, file, scalars)
    except (_Fallback, ValueError, RecursionError, IndexError):
        return None
    finally:
        scalars.close()


def _parse(text: str, file: str, scalars: _Scalars) -> Document:
    marks = YamlMarks(text, file)
    values, keys, items = marks.values, marks.keys, marks.items
    typed = scalars.typed
    words = DEFAULT_WORDS
    starts = DEFAULT_TYPED_STARTS
    word_starts = WORD_STARTS
    decimal = _DECIMAL.fullmatch
    no_word = words  # (a value no word has)
    names: dict[str, Any] = {}  # key as written -> its value (keys repeat)

    def plain(value: str) -> Any:
        first = value[0]
        if first not in starts:
            return value
        if first in word_starts:  # a string unless it is one of the words
            word = words.get(value, no_word)
            return value if word is no_word else word
        number = decimal(value)
        if number is not None:  # (int() refuses over 4300 digits: the events say where)
            return float(value) if number.group(1) else int(value)
        return typed(value)

    def value_of(rest: str, depth: int, path: tuple[PathPart, ...] | None, place: int) -> Any:
        """A one-line value at ``depth`` (the length of its path), written at ``place``."""
        first = rest[0]
        if first == '"':
            end = rest.find('"', 1)
            if end < 0 or "\\" in rest or not _tail_ok(rest, end + 1):
                raise _Fallback
            return rest[1:end]
        if first == "'":
            end = 1
            while True:
                end = rest.find("'", end)
                if end < 0:
                    raise _Fallback
                if rest.startswith("''", end):
                    end += 2
                    continue
                break
            if not _tail_ok(rest, end + 1):
                raise _Fallback
            return rest[1:end].replace("''", "'")
        if first == "[" or first == "{":
            if rest.startswith(("[]", "{}")):
                if not _tail_ok(rest, 2) or depth + 1 > MAX_DEPTH:
                    raise _Fallback
                if first == "[":
                    if depth < MARK_DEPTH:
                        items[path] = array("q")  # type: ignore[index]
                    return []
                return {}
            if "\\" in rest or depth + rest.count("[") + rest.count("{") > MAX_DEPTH:
                raise _Fallback
            try:
                value, end = _flow_scan(rest, 0)  # (a ValueError too: not JSON)
            except StopIteration:
                raise _Fallback from None  # not JSON where the value starts
            if end < len(rest) and not _tail_ok(rest, end):
                raise _Fallback
            if depth < MARK_DEPTH:  # the places of its items and keys are recorded
                _flow_marks(marks, rest, path, place)  # type: ignore[arg-type]
            return value
        if first in _NOT_PLAIN_START or (first in "-?:" and rest[1:2] in ("", " ")):
            raise _Fallback
        if "#" in rest:
            cut = rest.find(" #")
            if cut >= 0:
                rest = rest[:cut]
        if rest[-1] == " ":
            rest = rest.rstrip(" ")
        if ": " in rest or rest[-1] == ":":
            raise _Fallback  # a mapping inside a value: an error the parser words
        return plain(rest)

    # the open blocks, innermost last: [indent, container, path (None past MARK_DEPTH),
    # depth (its path's length), is a mapping, the list's item places (or None)]
    stack: list[list[Any]] = []
    top: list[Any] = []
    # a ``key:`` or ``-`` that ended its line: its value is the block on the next lines
    # (parent block, key, the value's path, the key's column)
    pending: tuple[list[Any], Any, tuple[PathPart, ...] | None, int] | None = None
    root: Any = None
    number = -1
    for indent, dash, key, blanks, rest in _LINES.findall(text):
        number += 1
        if not key and not dash:
            if not rest or rest[0] == "#":
                continue  # a blank or comment line
            if rest == "---" and root is None and not indent:
                root = False  # the document's start marker (once, before any content)
                continue
            raise _Fallback  # a scalar alone on its line, a marker, a directive, ...
        col = len(indent)
        if pending is not None:
            parent, at_key, path, key_col = pending
            pending = None
            if not (col > key_col or (col == key_col and dash and parent[4])):
                raise _Fallback  # a value written as nothing (null): PyYAML's marks
            depth = parent[3] + 1
            if depth >= MAX_DEPTH:
                raise _Fallback
            top = [col, [] if dash else {}, path, depth, not dash, None]
            if dash and depth < MARK_DEPTH:
                top[5] = items[path] = array("q")  # type: ignore[index]
            place = number << 20 | col
            if parent[4]:
                parent[1][at_key] = top[1]
                if depth <= MARK_DEPTH:
                    values[path] = place  # type: ignore[index]
            else:
                parent[1].append(top[1])
                if parent[5] is not None:
                    parent[5].append(place)
            stack.append(top)
        elif not stack:
            if root:
                raise _Fallback  # (cannot happen: the last block never closes)
            root = [] if dash else {}
            top = [col, root, (), 0, not dash, None]
            if dash:
                top[5] = items[()] = array("q")
            values[()] = number << 20 | col
            stack.append(top)
        if top[0] != col or (not dash and not top[4]):
            while top[0] > col or (top[0] == col and not top[4] and not dash):
                stack.pop()  # blocks end here (an indentless list ends at its key's column)
                if not stack:
                    raise _Fallback
                top = stack[-1]
            if top[0] != col:
                raise _Fallback  # a dedent to no block's column, or a continuation line
        if dash:
            if top[4]:
                raise _Fallback  # an item where the mapping's keys are
            seq = top[1]
            depth = top[3] + 1
            # (an item's own path is needed only where its children are recorded)
            path = (*top[2], len(seq)) if depth < MARK_DEPTH else None
            col += len(dash)
            if not key:
                if not rest:
                    pending = (top, None, path, col - len(dash))
                    continue
                seq.append(value_of(rest, depth, path, number << 20 | col))
                if top[5] is not None:
                    top[5].append(number << 20 | col)
                continue
            if depth >= MAX_DEPTH:
                raise _Fallback
            mapping: dict[Any, Any] = {}
            seq.append(mapping)
            if top[5] is not None:
                top[5].append(number << 20 | col)
            top = [col, mapping, path, depth, True, None]
            stack.append(top)
        # a key of the mapping ``top``
        mapping = top[1]
        name = names.get(key, no_word)
        if name is no_word:
            name = names[key] = plain(key)
        if name in mapping:
            raise _Fallback
        depth = top[3] + 1
        if depth <= MARK_DEPTH:
            path = (*top[2], str(name))
            keys[path] = number << 20 | col
        else:
            path = None
        if not rest:
            mapping[name] = None  # (held until its block opens)
            pending = (top, name, path, col)
            continue
        first = rest[0]
        place = number << 20 | (col + len(key) + 1 + len(blanks)) if depth <= MARK_DEPTH else 0
        if first in starts or first in _SPECIAL or "#" in rest or rest[-1] == " " or ": " in rest:
            mapping[name] = value_of(rest, depth, path, place)
        elif rest[-1] == ":":
            raise _Fallback
        else:
            mapping[name] = rest  # a plain string (most values)
        if depth <= MARK_DEPTH:
            values[path] = place  # type: ignore[index]
    if pending is not None or not isinstance(root, dict | list):
        raise _Fallback
    return Document(file, root, None, (), marks, may_hold_nul(text))
