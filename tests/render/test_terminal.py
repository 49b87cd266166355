"""One record per line, text cut with …, and columns chosen to fit a width."""

from __future__ import annotations

import pytest

from toolrun.render.terminal import Column, fit, layout, one_line


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\nb", "a\\nb"),
        ("a\r\nb", "a\\r\\nb"),
        ("\x1b[31mred", "\\x1b[31mred"),  # an escape sequence never reaches the terminal
        ("nel\x85", "nel\\x85"),
        ("ls\u2028rm", "ls\\u2028rm"),  # str.splitlines would split here
        ("abc\u202eexe.txt", "abc\\u202eexe.txt"),  # a bidi override would reorder it
        ("tab\there", "tab here"),
        ("plain text · ok …", "plain text · ok …"),
    ],
)
def test_one_line_escapes_what_would_break_a_record(text: str, shown: str) -> None:
    assert one_line(text) == shown
    assert len(one_line(text).splitlines()) == 1


def test_fit_cuts_with_an_ellipsis() -> None:
    assert fit("abcdef", 6) == "abcdef"
    assert fit("abcdefg", 6) == "abcde…"
    assert fit("abc", 0) == ""


COLUMNS = [
    Column("#", 2, drop=4),
    Column("id", 8),
    Column("target", 50, flex=True, minimum=12),
    Column("time", 6, drop=2),
    Column("execution", 13, drop=5),
    Column("note", 200, flex=True, minimum=12),
]


def test_a_wide_width_keeps_every_column() -> None:
    shown = layout(COLUMNS, 300)
    assert shown.names == ("#", "id", "target", "time", "execution", "note")
    assert sum(shown.widths) + 2 * 5 <= 300


@pytest.mark.parametrize(
    ("width", "names"),
    [
        (80, ("#", "id", "target", "time", "execution", "note")),
        (60, ("#", "id", "target", "time", "note")),
        (46, ("id", "target", "time", "note")),
        (40, ("id", "target", "note")),
    ],
)
def test_columns_go_in_drop_order_as_the_width_shrinks(width: int, names: tuple[str, ...]) -> None:
    shown = layout(COLUMNS, width)
    assert shown.names == names
    assert sum(shown.widths) + 2 * (len(names) - 1) <= width


def test_cells_are_cut_to_their_column() -> None:
    shown = layout(COLUMNS, 60)
    cells = shown.cells({"#": "1", "id": "call-1", "target": "x" * 100, "note": "n\nm" * 50})
    assert all(len(c) <= w for c, w in zip(cells, shown.widths, strict=True))
    assert cells[2].endswith("…") and "\n" not in "".join(cells)
