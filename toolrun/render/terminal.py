"""Text for a terminal: one line per record, cut to a width with ``…``, and the columns
of a table chosen and sized to fit the terminal."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# Control characters (C0 but tab, DEL, C1), the Unicode line and paragraph separators
# and the bidirectional overrides: a line break would split a record (str.splitlines
# splits at U+2028 too), an escape sequence would drive the terminal, a bidi override
# would show text in another order than it is. They print as `\n`, `\r`, `\xNN`, `\uNNNN`.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r"}

# A painter colours a cell's text by the status it shows (None: no colour).
Painter = Callable[[str, str], str]


def one_line(text: str) -> str:
    """``text`` as one line: control characters escaped, tabs as spaces."""
    return _CONTROL.sub(lambda m: _NAMED.get(m[0], _escape(m[0])), text).replace(
        "\t", " "
    )


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, ending in ``…`` when it was cut."""
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    width: int  # the widest its cells get (flexible columns: the most they may take)
    drop: int = 0  # dropped first when the table is too wide: higher goes first (0: never)
    flex: bool = False  # shrinks to what is left, its cells cut with …
    minimum: int = 0  # a flexible column never gets narrower than this


@dataclass(frozen=True, slots=True)
class Layout:
    """Which columns are shown and how wide each is."""

    names: tuple[str, ...]
    widths: tuple[int, ...]

    def cells(self, row: Mapping[str, str]) -> list[str]:
        """A row's shown cells, each on one line and cut to its column's width."""
        return [fit(one_line(row.get(n, "")), w) for n, w in zip(self.names, self.widths, strict=True)]

    def line(
        self,
        cells: Sequence[str],
        paint: Painter | None = None,
        status: str = "",
        painted: str = "status",
    ) -> str:
        """Cells padded to their widths (the last one as it is); the ``painted`` column's
        cell coloured for ``status`` after padding, so colour codes never count as width."""
        out = []
        for i, (name, cell) in enumerate(zip(self.names, cells, strict=True)):
            text = cell if i == len(cells) - 1 else cell.ljust(self.widths[i])
            out.append(paint(text, status) if paint and name == painted and status else text)
        return "  ".join(out).rstrip()

    def header(self) -> str:
        rule = ["-" * w for w in self.widths]
        return self.line(list(self.names)) + "\n" + self.line(rule)


def layout(columns: Sequence[Column], width: int | None) -> Layout:
    """The columns that fit in ``width`` (None: no limit; every column at its width).

    Columns marked ``drop`` leave, highest first, while the fixed ones and the flexible
    ones at their minimum do not fit; what is left is shared by the flexible columns,
    evenly (each up to its own width, the last one taking the rest)."""
    shown = list(columns)
    if width is not None:
        while _least(shown) > width and any(c.drop for c in shown):
            shown.remove(max((c for c in shown if c.drop), key=lambda c: c.drop))
    widths = [max(c.width, len(c.name)) if not c.flex else 0 for c in shown]
    flexible = [i for i, c in enumerate(shown) if c.flex]
    room = None if width is None else width - sum(widths) - 2 * (len(shown) - 1)
    for n, i in enumerate(flexible):
        c = shown[i]
        last = n == len(flexible) - 1
        if room is None:
            widths[i] = max(c.width, len(c.name))
            continue
        share = room // (len(flexible) - n)
        widths[i] = max(c.minimum, room if last else min(c.width, share))
        room -= widths[i]
    return Layout(tuple(c.name for c in shown), tuple(widths))


def _least(columns: Sequence[Column]) -> int:
    return sum(c.minimum if c.flex else max(c.width, len(c.name)) for c in columns) + 2 * (
        len(columns) - 1
    )
