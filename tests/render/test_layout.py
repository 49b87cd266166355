"""The layout engine: cells wrap at word boundaries and are never cut, the columns that
decide get their room first, the least useful ones go, and below a table's narrowest
each row is a card."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolrun.render.layout import Column, glued, grid, text_width, wrap

COLUMNS = [
    Column("status", 14, priority=100, head=True),
    Column("id", 8, minimum=8, priority=90, head=True),
    Column("call", 70, minimum=20, priority=70, share=0.2, head=True, comfort=30),
    Column("decided by", 40, minimum=18, priority=80, share=0.25, comfort=24),
    Column("reason", 120, minimum=28, priority=60, comfort=40),
    Column("time", 6, drop=2),
    Column("#", 2, drop=4),
    Column("execution", 13, drop=5),
]
ROW = {
    "status": "needs_approval",
    "id": "push",
    "call": "Bash(git push --force origin main && echo pushed to the remote repository)",
    "decided by": glued("rule Bash(git push *)") + " (.claude/settings.json:12)",
    "reason": "ask rule Bash(git push *) (.claude/settings.json:12) matches `git push "
    "--force origin main`; no terminal to ask (use --ask allow to approve)",
    "time": "",
    "#": "4",
    "execution": "exec_6f4fe3d5",
}

# text of every class a cell holds: words, paths and URLs, long identifiers (an MCP tool
# name), wide characters (CJK, emoji) and combining marks
TEXT = st.lists(
    st.one_of(
        st.text(alphabet="abcdefghij", min_size=1, max_size=12),
        st.text(alphabet="abc/_-.:", min_size=1, max_size=90),
        st.just("mcp__github_enterprise_mirror_of_acme_corporation__write_note"),
        st.text(alphabet="日本語のテキスト🙂", min_size=1, max_size=20),
        st.just("cafe\u0301"),
    ),
    max_size=30,
).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(text=TEXT, width=st.integers(min_value=1, max_value=120))
def test_wrap_fits_the_width_and_keeps_every_character(text: str, width: int) -> None:
    lines = wrap(text, width)
    assert all(text_width(line) <= max(width, 2) for line in lines), lines
    # (a wide character is two columns: alone on a one-column line it still shows)
    assert "".join("".join(lines).split()) == "".join(text.split())


@pytest.mark.parametrize(
    ("text", "width", "lines"),
    [
        ("deny rule Bash(curl *) matches", 12, ["deny rule", "Bash(curl *)", "matches"]),
        ("deny rule Bash(curl *) matches", 11, ["deny rule", "Bash(curl", "*) matches"]),
        # a unit that fits stays on one line, however the words around it fall
        (glued("rule Bash(curl *)") + " (toolrun.yaml:4)", 17, ["rule Bash(curl *)", "(toolrun.yaml:4)"]),
        (glued("rule Read(./secrets/**)"), 30, ["rule Read(./secrets/**)"]),
        (glued("hook `./guard.sh --strict`") + " (a:1)", 26, ["hook `./guard.sh --strict`", "(a:1)"]),
        # a word wider than the line breaks after a / _ - where it can
        ("https://example.com/some/long/path", 20, ["https://example.com/", "some/long/path"]),
        ("mcp__github_enterprise_mirror__echo", 16, ["mcp__github_", "enterprise_", "mirror__echo"]),
        ("日本語のテキスト", 8, ["日本語の", "テキスト"]),  # two columns a character
    ],
)
def test_wrap_breaks_at_words_and_keeps_units(text: str, width: int, lines: list[str]) -> None:
    assert wrap(text, width) == lines


def test_the_first_line_may_have_its_own_width() -> None:
    assert wrap("one two three four", 9, first=4) == ["one", "two three", "four"]


@pytest.mark.parametrize("width", [120, 160, 300])
def test_the_deciding_columns_get_their_room_first(width: int) -> None:
    table = grid(COLUMNS, width)
    assert not table.cards
    widths = dict(zip(table.names, table.widths, strict=True))
    assert sum(table.widths) + 2 * (len(widths) - 1) <= width
    assert widths["status"] == 14  # never wrapped
    assert widths["decided by"] >= min(40, width // 4)
    lines = table.header() + table.row(ROW)
    assert all(len(line) <= width for line in lines), "\n".join(lines)
    assert any("rule Bash(git push *)" in line for line in lines)  # the unit, whole


@pytest.mark.parametrize(
    ("width", "dropped"),
    [(300, set()), (170, set()), (150, {"execution"}), (125, {"execution", "#", "time"})],
)
def test_the_least_useful_columns_go_first(width: int, dropped: set[str]) -> None:
    table = grid(COLUMNS, width)
    assert {c.name for c in COLUMNS} - set(table.names) == dropped


@pytest.mark.parametrize("width", [20, 40, 60, 80])
def test_below_a_tables_narrowest_each_row_is_a_card(width: int) -> None:
    table = grid(COLUMNS, width)
    assert table.cards and table.header() == []
    lines = table.row(ROW)
    assert all(len(line) <= width for line in lines), "\n".join(lines)
    assert lines[0].startswith("needs_approval  push")
    text = "".join("".join(lines).split())
    for name in ("call", "decided by", "reason"):
        assert "".join(ROW[name].replace("\u00a0", " ").split()) in text
    assert "exec_6f4fe3d5" not in text  # what a table drops first, a card leaves out


def test_colour_codes_never_count_as_width() -> None:
    def paint(text: str, status: str) -> str:
        return f"\x1b[33m{text}\x1b[0m"

    for width in (60, 160):
        table = grid(COLUMNS, width)
        first = table.row(ROW, paint, "needs_approval")[0]
        assert first.startswith("\x1b[33mneeds_approval")
        plain = first.replace("\x1b[33m", "").replace("\x1b[0m", "")
        assert plain == table.row(ROW)[0]


def test_a_cell_is_one_record_however_it_is_wrapped() -> None:
    table = grid(COLUMNS, 120)
    row = {**ROW, "reason": "line one\nline two \x1b[31mred"}
    text = "\n".join(table.row(row))
    assert "\x1b" not in text and "\\x1b[31mred" in "".join(text.split())


def test_no_width_is_every_column_at_its_widest() -> None:
    table = grid(COLUMNS, None)
    assert table.widths == tuple(max(c.natural, len(c.name)) for c in COLUMNS)
