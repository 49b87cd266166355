"""Whether bash brace-expands a word: only a ``{...}`` with a comma or a sequence does.

Bash (``braces.c``) expands an unquoted ``{`` (not the ``{`` of ``${``) up to its
matching unquoted ``}`` when the text between holds an unquoted comma at its own
level (``{a,b}``, ``x{,}``) or is a sequence expression (``{1..3}``, ``{a..e..2}``).
Any other brace is literal: git's revision syntax ``HEAD^{tree}``, ``stash@{0}``,
``@{u}..`` and find's ``{}`` reach the program unchanged. Where this reading is unsure
it says "expands": the word is then unknown, which only ever asks.
"""

from __future__ import annotations

import re

_SEQUENCE = re.compile(r"(?:[+-]?[0-9]+\.\.[+-]?[0-9]+|[A-Za-z]\.\.[A-Za-z])(?:\.\.[+-]?[0-9]+)?")


def _unquoted(raw: str) -> list[tuple[str, bool]]:
    """Each character of ``raw`` with whether bash sees it unquoted (quotes dropped)."""
    out: list[tuple[str, bool]] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\" and i + 1 < n:
            out.append((raw[i + 1], False))
            i += 2
        elif c == "'":
            end = raw.find("'", i + 1)
            end = n if end < 0 else end
            out.extend((q, False) for q in raw[i + 1 : end])
            i = end + 1
        elif c == '"':
            i += 1
            while i < n and raw[i] != '"':
                if raw[i] == "\\" and i + 1 < n and raw[i + 1] in '"\\$`':
                    i += 1
                out.append((raw[i], False))
                i += 1
            i += 1
        else:
            out.append((c, True))
            i += 1
    return out


def brace_expands(raw: str) -> bool:
    """Whether bash would brace-expand the word whose source text is ``raw``."""
    if "{" not in raw:
        return False
    chars = _unquoted(raw)
    for start, (c, free) in enumerate(chars):
        if c != "{" or not free or (start and chars[start - 1] == ("$", True)):
            continue
        depth = 0
        comma = False
        for end in range(start + 1, len(chars)):
            d, open_ = chars[end]
            if not open_:
                continue
            if d == "{":
                depth += 1
            elif d == "}":
                if depth == 0:
                    inner = chars[start + 1 : end]
                    if comma:
                        return True
                    if all(f for _c, f in inner) and _SEQUENCE.fullmatch(
                        "".join(x for x, _f in inner)
                    ):
                        return True
                    break  # a literal brace: look again from the next `{`
                depth -= 1
            elif d == "," and depth == 0:
                comma = True
    return False
