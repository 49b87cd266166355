"""JSON read strictly by the C ``json`` scanner, with the positions of its shallow levels."""

from __future__ import annotations

import json
import re
from typing import Any

from toolrun.errors import Location, Problem
from toolrun.yamlfile.document import Document
from toolrun.yamlfile.errors import MAX_DEPTH, DocumentError, at_offset
from toolrun.yamlfile.marks import JSON_TOKEN, JsonMarks, check_json_depth, json_scan, scanstring
from toolrun.yamlfile.paths import may_hold_nul

# \uD800-\uDBFF not followed by \uDC00-\uDFFF, or the latter alone: no Unicode text
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_LONG_NUMBER = re.compile(r"\d{4301,}")  # longer than int() converts by default


def _check_json_strings(text: str, file: str) -> None:
    """DocumentError at the first string whose escapes decode to a lone surrogate."""
    if "\\ud" not in text and "\\uD" not in text:
        return  # no surrogate escape at all (str.find: far cheaper than the regex)
    if _LONE_SURROGATE.search(text) is None:
        return
    for token in JSON_TOKEN.finditer(text):
        if token.group()[0] != '"' or _LONE_SURROGATE.search(token.group()) is None:
            continue
        value, _ = scanstring(text, token.start() + 1)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = value[exc.start]
            raise at_offset(
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
    # a lean text is checked by the walk of its marks alone, when it is JSON (it nearly
    # always is: checking it first as well was a third of a split plan part's parse)
    marks = _walked(text, file) if lean else None
    data: Any = None
    try:
        # the C decoder: the data, and its own messages and positions for bad input
        if marks is None:
            data = _check_only(text) if lean else json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentError(
            Problem(Location(file, exc.lineno, exc.colno), "", f"invalid JSON: {exc.msg}")
        ) from None
    except RecursionError:
        check_json_depth(text, file, 0, len(text), 0)
        raise at_offset(text, file, 0, f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:  # an integer too long to convert
        found = _LONG_NUMBER.search(text)
        raise at_offset(
            text, file, found.start() if found else 0, "a number with more than 4300 digits"
        ) from None
    _check_json_strings(text, file)
    if marks is None:
        marks = JsonMarks(text, file)
        marks.walk(0, ())
    if lean:
        data = _skeleton(marks)
        if data is None:
            data, lean = json.loads(text), False
    return Document(
        file, data, None, tuple(marks.problems), marks, may_hold_nul(text), lean=lean
    )


def _walked(text: str, file: str) -> JsonMarks | None:
    """The marks of ``text`` when it is JSON whose nesting is within the limits: its walk
    checks it as the decoder would (:meth:`JsonMarks.walk`); None for anything else,
    which is then read as always, for the same answer (the decoder's message, or the
    walk's for a depth beyond the limit)."""
    marks = JsonMarks(text, file)
    try:
        end = marks.walk(0, ())
    except (ValueError, StopIteration, IndexError, RecursionError, DocumentError):
        return None
    return marks if not text[end:].strip(" \t\n\r") else None  # (nothing after it)


def _skeleton(marks: JsonMarks) -> dict[str, Any] | None:
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
                skeleton_turns if key == "turns" else json_scan(text, marks.values[path])[0]
            )
    return data
