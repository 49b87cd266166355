"""One layout engine for every table toolrun prints at a terminal (exec, check, show, runs).

Columns are measured (or estimated, for a table that streams), the ones that decide get
their width first, and every cell is wrapped at word boundaries, never cut: a row is as
many lines as its tallest cell. When even the columns that must stay do not fit at their
narrowest, each row becomes a *card*: its head on one line, each other field below it on
lines of its own, all wrapped to the width.

Widths are display columns: a wide (East Asian) character counts two, a combining mark
none, so a line never runs past the terminal's edge.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from toolrun.render.terminal import Painter, one_line

#: glues the words of one unit (a rule's text): wrapping breaks there only when the unit
#: alone is wider than its column; shown as a space
GLUE = "\u00a0"
GAP = 2  # spaces between two columns
#: after these a word too long for its column may break (a path, a tool name, a URL)
_SOFT_BREAKS = frozenset("/_-.,:;=&?)]}>|")

def text_width(text: str) -> int:
    """How many terminal columns ``text`` takes."""
    if text.isascii() or text.replace(GLUE, " ").isascii():  # (the glue is one column)
        return len(text)
    return sum(_char_width(c) for c in text)


def _char_width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def glued(text: str) -> str:
    """``text`` as one unit for :func:`wrap` (its spaces are not break points)."""
    return text.replace(" ", GLUE)


def wrap(text: str, width: int, first: int | None = None) -> list[str]:
    """``text`` in lines of at most ``width`` columns (the first line: ``first``), broken
    at spaces; a word longer than a line breaks after a ``/``, ``_``, ``-``, ... where it
    can, anywhere else where it cannot. Nothing is dropped but the spaces at the breaks."""
    room = max(first if first is not None else width, 1)
    width = max(width, 1)
    lines: list[str] = []
    line, used = "", 0

    def close(piece: str) -> None:
        nonlocal room
        lines.append(piece)
        room = width

    for word in text.split(" "):
        if not word:
            continue
        size = text_width(word)
        if line and used + 1 + size <= room:
            line, used = f"{line} {word}", used + 1 + size
            continue
        if line:
            close(line)
            line, used = "", 0
        if size <= room:
            line, used = word, size
            continue
        rest = word.replace(GLUE, " ")
        while text_width(rest) > room:
            piece, rest = _break_word(rest, room)
            close(piece)
        line, used = rest.replace(" ", GLUE), text_width(rest)
    if line or not lines:
        lines.append(line)
    return [piece.replace(GLUE, " ") for piece in lines]


def _break_word(word: str, width: int) -> tuple[str, str]:
    """A word wider than ``width`` as its first piece that fits and the rest: the piece
    ends at the last soft break (or space) that leaves it at least a third full, else it
    is cut at the width."""
    if word.isascii():
        cut = width
    else:
        cut, used = 0, 0
        for char in word:
            used += _char_width(char)
            if used > width:
                break
            cut += 1
    soft = 0
    for i in range(cut - 1, cut // 3 - 1, -1):  # the last break that keeps a third
        char = word[i]
        # a break after a run of them (``__``, ``//``), not inside it
        if (char in _SOFT_BREAKS or char == " ") and word[i + 1 : i + 2] != char:
            soft = i + 1
            break
    cut = max(soft or cut, 1)
    return word[:cut].rstrip(" "), word[cut:].lstrip(" ")


def pad(text: str, width: int) -> str:
    return text + " " * max(0, width - text_width(text))


@dataclass(frozen=True, slots=True)
class Column:
    """A column: how wide its cells are, how narrow it may get, who gets room first."""

    name: str
    natural: int  # the widest cell (measured, or a guess for a streamed table)
    minimum: int = 0  # the narrowest it wraps to (0: its natural width, never wrapped)
    priority: int = 0  # room goes to higher priorities first
    share: float = 1.0  # in the first round it grows to at most this part of the width
    drop: int = 0  # dropped, highest first, when the rest does not fit (0: never)
    #: kept columns are dropped before this column would get narrower than this
    comfort: int = 0
    head: bool = False  # a card shows it on its first line
    label: str = ""  # a card's name for it (default: the column's name)

    @property
    def least(self) -> int:
        """The narrowest this column gets in a table: never below its header's width."""
        return max(min(self.minimum or self.natural, self.natural), len(self.name), 1)

    @property
    def comfortable(self) -> int:
        return max(self.least, min(self.widest, self.comfort))

    @property
    def widest(self) -> int:
        return max(self.natural, len(self.name), 1)


@dataclass(frozen=True, slots=True)
class Grid:
    """Which columns a table shows, how wide each is, or that its rows are cards."""

    columns: tuple[Column, ...]
    widths: tuple[int, ...]
    width: int | None  # the terminal's (None: unlimited)
    cards: bool = False
    painted: str = "status"  # the column whose cell is coloured for the row's status

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def header(self) -> list[str]:
        """The header and its rule (nothing for cards: each field is labelled)."""
        if self.cards:
            return []
        names = {c.name: c.name for c in self.columns}
        rule = {c.name: "-" * w for c, w in zip(self.columns, self.widths, strict=True)}
        return [self._line(names), self._line(rule)]

    def row(
        self, cells: Mapping[str, str], paint: Painter | None = None, status: str = ""
    ) -> list[str]:
        """One row's lines: each cell wrapped to its column (cards: wrapped to the width)."""
        if self.cards:
            return self._card(cells, paint, status)
        wrapped = [
            wrap(one_line(cells.get(c.name, "")), w)
            for c, w in zip(self.columns, self.widths, strict=True)
        ]
        height = max(len(w) for w in wrapped)
        lines = []
        for i in range(height):
            parts = {
                c.name: cell[i] if i < len(cell) else ""
                for c, cell in zip(self.columns, wrapped, strict=True)
            }
            lines.append(self._line(parts, paint, status))
        return lines

    def _line(
        self, parts: Mapping[str, str], paint: Painter | None = None, status: str = ""
    ) -> str:
        out = []
        last = len(self.columns) - 1
        for i, (column, width) in enumerate(zip(self.columns, self.widths, strict=True)):
            text = parts.get(column.name, "")
            text = text if i == last else pad(text, width)
            # coloured after padding: colour codes never count as width
            if paint is not None and status and column.name == self.painted and text.strip():
                text = paint(text, status)
            out.append(text)
        return (" " * GAP).join(out).rstrip()

    def _card(self, cells: Mapping[str, str], paint: Painter | None, status: str) -> list[str]:
        """``status  id  call`` (the call wrapped under itself), then a line per field:
        ``decided by: rule Bash(curl *) (toolrun.yaml:4)``, the values aligned."""
        width = self.width or 80
        indent = 4 if width >= 40 else 2
        cells = {name: one_line(text) for name, text in cells.items()}
        heads = [(c, cells.get(c.name, "")) for c in self.columns if c.head]
        *leading, (_, last) = heads or [(self.columns[0], "")]
        lead = ""
        for column, text in leading:
            fixed = not column.minimum  # never wrapped (a status): padded, so cards align
            lead += (pad(text, column.natural) if fixed else text) + " " * GAP
        if width - text_width(lead) < 16:  # no room left for the call beside its lead
            lines = [lead.rstrip()] + [" " * indent + x for x in wrap(last, width - indent)]
        else:
            first, *rest = wrap(last, width - indent, first=width - text_width(lead))
            lines = [(lead + first).rstrip(), *(" " * indent + x for x in rest)]
        painted = cells.get(self.painted, "")
        if paint is not None and status and painted and lines[0].startswith(painted):
            lines[0] = paint(painted, status) + lines[0][len(painted) :]
        fields = [c for c in self.columns if not c.head and cells.get(c.name)]
        labels = max((len(c.label or c.name) for c in fields), default=0) + 2
        # the values start in one column when the labels leave them room enough
        hang = labels if width - indent - labels >= 24 else 2
        for column in fields:
            label = f"{column.label or column.name}:"
            head = pad(label, max(hang, len(label) + 1))
            first_room = width - indent - text_width(head)
            first, *rest = wrap(cells[column.name], width - indent - hang, first=first_room)
            lines.append((" " * indent + head + first).rstrip())
            lines += [" " * (indent + hang) + x for x in rest]
        return lines


def grid(
    columns: Sequence[Column],
    width: int | None,
    *,
    painted: str = "status",
) -> Grid:
    """The table for ``width`` columns (None: every column at its widest, nothing wrapped).

    Columns marked ``drop`` leave, highest first, while the others do not fit at their
    ``comfort`` width (the droppable ones at their narrowest); if what is left does not
    fit at its narrowest, the rows are cards. The room left is handed out by
    priority: first each column up to its ``share`` of the width, then up to its widest."""
    shown = list(columns)
    if width is None:
        return Grid(tuple(shown), tuple(c.widest for c in shown), None, painted=painted)

    def least(cols: Sequence[Column]) -> int:
        return sum(c.least for c in cols) + GAP * (len(cols) - 1)

    def wanted(cols: Sequence[Column]) -> int:
        return sum(c.least if c.drop else c.comfortable for c in cols) + GAP * (len(cols) - 1)

    while wanted(shown) > width and any(c.drop for c in shown):
        shown.remove(max((c for c in shown if c.drop), key=lambda c: c.drop))
    if least(shown) > width:
        kept = tuple(c for c in columns if not c.drop)
        return Grid(kept, tuple(c.widest for c in kept), width, cards=True, painted=painted)
    widths = [c.least for c in shown]
    room = width - least(shown)
    order = sorted(range(len(shown)), key=lambda i: -shown[i].priority)
    for capped in (True, False):
        for i in order:
            column = shown[i]
            goal = column.widest
            if capped:
                goal = min(goal, max(widths[i], int(column.share * width)))
            grow = min(room, max(0, goal - widths[i]))
            widths[i] += grow
            room -= grow
    return Grid(tuple(shown), tuple(widths), width, painted=painted)


def measured(
    columns: Sequence[Column], rows: Sequence[Mapping[str, str]]
) -> list[Column]:
    """``columns`` with their natural width taken from ``rows``."""
    from dataclasses import replace

    out = []
    for column in columns:
        widest = max((text_width(r.get(column.name, "")) for r in rows), default=0)
        out.append(replace(column, natural=max(widest, 1)))
    return out
