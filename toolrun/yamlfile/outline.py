"""Where a YAML plan's turns are written, guessed from its lines: what lets a process parse
only the turns it decides (``check`` across processes)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass


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
