"""Brace expansion: bash expands a brace only with a comma or a sequence in it.

Checked against bash itself: a word toolrun reads as literal must reach the program
exactly as toolrun read it.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from toolrun.permissions.bash import analyse
from toolrun.permissions.braces import brace_expands

LITERAL = [
    # git revision syntax (gitrevisions(7)); find's {} (GNU find manual); by hand
    "HEAD^{tree}", "HEAD^{commit}", "stash@{0}", "@{u}..", "@{upstream}", "HEAD@{1}..HEAD@{2}",
    "main@{yesterday}", "@{-1}", "v1^{}", "{}", "{a}", "{a..}", "{1..a}", "x{,",
    "{'a,b'}", '{"a,b"}', "\\{a,b}", "{a\\,b}", 'a"{"b,c}', "{a,b\"}\"", "}{a,b",
]  # fmt: skip
EXPANDS = [
    # bash manual, "Brace Expansion"; by hand
    "{a,b}", "x{a,b}y", "{1..3}", "{a..e}", "{1..9..2}", "{01..3}", "{-1..1}", "x{,}y",
    "a{b{c,d}}", "{a}{b,c}", "{x,y}{1..2}", "\\${a,b}", "{{a,b}", "{a,b}}", "{a..z..5}",
]  # fmt: skip


def _bash(word: str) -> str:
    done = subprocess.run(["bash", "-c", f"printf '%s\\n' {word}"], capture_output=True,
                          text=True, check=True)
    return done.stdout


@pytest.mark.parametrize("word", LITERAL)
def test_literal_braces_reach_the_program_as_read(word: str) -> None:
    assert not brace_expands(word)
    [command] = analyse(f"echo {word}").commands
    value = command.words[1].value
    assert value is not None
    if shutil.which("bash"):
        assert _bash(word) == value + "\n"


@pytest.mark.parametrize("word", EXPANDS)
def test_expanding_braces_are_unknown_words(word: str) -> None:
    assert brace_expands(word)
    [command] = analyse(f"echo {word}").commands
    assert command.words[1].value is None
    if shutil.which("bash"):
        assert _bash(word).count("\n") > 1  # bash made more than one word of it
