"""One record per line, and text cut with … where a line must stay one line."""

from __future__ import annotations

import pytest

from toolrun.render.terminal import fit, one_line


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
