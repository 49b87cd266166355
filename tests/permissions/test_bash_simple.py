"""The parser-free reading of plain commands (``bash_simple``) gives the very analysis the
tree-sitter walk gives, and takes nothing it cannot read exactly."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.permissions.shell_grammar import commands as shell_commands
from toolrun.permissions import bash, bash_simple
from toolrun.permissions.bash_simple import simple_commands


def parsed(command: str, monkeypatch: pytest.MonkeyPatch) -> bash.BashAnalysis:
    """The analysis through tree-sitter only (nested ``sh -c`` strings included)."""
    with monkeypatch.context() as m:
        m.setattr(bash, "simple_commands", lambda _command: None)
        return bash._analyse(command, 0)


_plain = st.text("abcxyzAZ019_./:=,+@%-", min_size=1, max_size=6)
_single = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=5).map(
    lambda t: "'" + t.replace("'", "") + "'"
)
_double = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=5).map(
    lambda t: '"' + t + '"'
)
_tricky = st.sampled_from([
    "done", "if", "{", "}", "!", "time", "export", "declare", "local", "unset", "[[", "coproc",
    "in", "function", "A=1", "A=", "A+=1", "A='x y'", "1=a", "-1", "007", "1a", "a=b=c",
    "rm", "sh", "-c", "bash", "env", "timeout", "5", "xargs", "sudo", "git", "-C", "push",
    "find", "-exec", "python", "eval", "cd", "/", "~", "$x", "*", "#", "a#b", "\\", "&", ">",
    "(", "\t", "\n", "`", "$(", "%", "--", "ls", "cat", "echo", "curl", "nohup",
])  # fmt: skip
_word = st.lists(st.one_of(_plain, _single, _double, _tricky), min_size=1, max_size=3).map(
    "".join
)
_operator = st.sampled_from([" | ", " && ", " || ", "; ", ";", "|", "&&", " ; ", " ", "  "])


@st.composite
def plain_commands(draw: st.DrawFn) -> str:
    """Words and operators, mostly of the form the fast reading takes, some just not."""
    parts: list[str] = [draw(st.sampled_from(["", " ", "  "]))]
    for i in range(draw(st.integers(1, 8))):
        if i:
            parts.append(draw(_operator))
        parts.append(draw(_word))
    parts.append(draw(st.sampled_from(["", " ", ";", " |", " &&"])))
    return "".join(parts)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(plain_commands(), shell_commands))
def test_the_fast_reading_gives_the_parser_s_analysis(command: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert bash._analyse(command, 0) == parsed(command, monkeypatch)


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git diff -- src/p1/m1.py",
        "cat src/p1/f1.txt | grep -n word1 | head -n 1",
        "V1=v1 make target1",
        "find src/p1 -name '*.py1' -type f",
        "python -c 'print(1)'",
        "ls -la d1 && wc -l f1; echo \"a b\" || true",
        "sh -c 'rm -rf x'",
    ],
)
def test_plain_commands_are_read_without_the_parser(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert simple_commands(command) is not None
    assert bash._analyse(command, 0) == parsed(command, monkeypatch)


@pytest.mark.parametrize(
    "command",
    [
        "echo $HOME", "ls *.py", "cd ~/x", "echo hi # note", "a & b", "a |& b", "echo a > f",
        "(a)", "{ a; }", "a;", "; a", "a && && b", "if true; then a; fi", "x=1", "A=$(b) c",
        "echo done", "export A=1", "echo 'a'\\''b'", "echo \"$x\"", "a\nb", "a\tb", "! a",
        "time a", "echo a#b", "A+=1 b", "", "   ", "echo \"`b`\"", "echo é",
    ],
)  # fmt: skip
def test_anything_else_goes_through_the_parser(command: str) -> None:
    assert simple_commands(command) is None


def test_a_rule_denies_what_the_fast_reading_finds_behind_wrappers_and_in_strings() -> None:
    # the deny forms come from the same code whichever way the words were read
    for command, form in [
        ("timeout 5 curl -s x", "curl -s x"),
        ("env A=1 rm -rf b", "rm -rf b"),
        ("git -C . --no-pager push origin", "git push origin"),
        ("sh -c 'curl x | sh'", "curl x"),
    ]:
        analysis = bash.analyse(command)
        assert simple_commands(command) is not None
        assert any(form in c.deny_forms for c in analysis.commands), (command, analysis)


_unquoted_word = st.lists(
    st.one_of(_plain, st.sampled_from(["A=1", "A=", "1=a", "-1", "if", "==", "a==b", "=a",
                                       "rm", "-x", "a:b", "a,b", "--x=y", "done"])),
    min_size=1, max_size=3,
).map("".join)


@st.composite
def unquoted_commands(draw: st.DrawFn) -> str:
    """Plain words and operators only, blanks anywhere (what the split reading takes)."""
    blanks = st.sampled_from(["", " ", "  "])
    parts: list[str] = [draw(blanks)]
    for i in range(draw(st.integers(1, 6))):
        if i:
            parts.append(draw(blanks) + draw(st.sampled_from(["|", "&&", "||", ";", " ", "|||",
                                                              ";;", "&&&&"])) + draw(blanks))
        parts.append(draw(_unquoted_word))
    parts.append(draw(st.sampled_from(["", " ", ";", " |", " &&", "  "])))
    return "".join(parts)


@settings(max_examples=3000, deadline=None)
@given(unquoted_commands())
def test_the_split_reading_of_unquoted_commands_is_the_token_reading(command: str) -> None:
    # (the words of a part are remembered by its text: read twice, a part is read the same)
    whole = bash_simple._WHOLE.fullmatch(command) is not None
    expected = bash_simple._tokenized(command) if whole else None
    for _ in range(2):
        assert simple_commands(command) == expected, command
