"""Bash analysis: splitting, substitutions, stripping, fail-closed problems."""

from __future__ import annotations

import pytest

from toolrun.permissions.bash import analyse
from toolrun.permissions.rules import bash_pattern_regex


def texts(command: str) -> list[str]:
    return [c.text for c in analyse(command).commands]


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("a && b || c ; d", ["a", "b", "c", "d"]),
        ("a | b |& c", ["a", "b", "c"]),
        ("a & b", ["a", "b"]),
        ("a\nb\n\nc", ["a", "b", "c"]),
        ("echo $(a) `b` <(c)", ["a", "b", "c", "echo $(a) `b` <(c)"]),
        ('echo "x $(a)"', ["a", 'echo "x $(a)"']),
        ("(a; b) | c", ["a", "b", "c"]),
        ("! a", ["a"]),
        ("ls # a comment", ["ls"]),
    ],
)
def test_split(command: str, parts: list[str]) -> None:
    analysis = analyse(command)
    assert analysis.analysable, analysis.problems
    assert texts(command) == parts


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("if a; then b; fi", "if_statement"),
        ("for x in y; do z; done", "for_statement"),
        ("while a; do b; done", "while_statement"),
        ("f() { a; }", "function_definition"),
        ("case x in y) z;; esac", "case_statement"),
        ('echo "open', "does not parse"),
        ("a && && b", "does not parse"),
        ("eval ls", "eval runs a string"),
        ("bash -c 'ls'", "bash -c runs a string"),
        ("sh -ec 'ls'", "sh -c runs a string"),
        ("curl x | bash", "reads its commands from standard input"),
        ("$CMD a", "computed at run time"),
        ("$(which rm) a", "computed at run time"),
        ("ls\x07", "control characters"),
        ("r\\\nm x", "line continuation"),
        ("x" * 10_001, "longer than"),
        ("   ", "empty command"),
        ("ls;;", "unsupported shell operator"),
    ],
)
def test_problems(command: str, problem: str) -> None:
    analysis = analyse(command)
    assert not analysis.analysable
    assert any(problem in p for p in analysis.problems), analysis.problems


def test_commands_inside_unsupported_constructs_are_listed_for_deny() -> None:
    analysis = analyse("if true; then rm -rf /; fi")
    rm = [c for c in analysis.commands if c.text == "rm -rf /"]
    assert rm and not rm[0].analysable and rm[0].allow_form is None
    assert "rm -rf /" in rm[0].deny_forms


def test_sh_c_script_is_analysed_for_deny() -> None:
    analysis = analyse("bash -lc 'git push && rm -rf x'")
    assert {"git push", "rm -rf x"} <= {f for c in analysis.commands for f in c.deny_forms}


def test_allow_form_strips_safe_env_and_wrappers() -> None:
    (cmd,) = analyse("NODE_ENV=test timeout 30 nice -n 5 npm test").commands
    assert cmd.allow_form == "npm test"
    assert cmd.name == "npm"


def test_allow_form_keeps_unsafe_env() -> None:
    (cmd,) = analyse("MY_FLAG=x npm test").commands
    assert cmd.allow_form == "MY_FLAG=x npm test"
    assert cmd.unsafe_env == ("MY_FLAG=x",)
    # (a variable that loads code is more than unsafe: see test_envcode.py)
    (preload,) = analyse("LD_PRELOAD=x.so npm test").commands
    assert preload.allow_form is None and not preload.analysable


def test_deny_forms_strip_everything() -> None:
    (cmd,) = analyse("FOO=1 sudo -E env BAR=2 nohup /usr/bin/rm -rf x").commands
    assert "rm -rf x" in cmd.deny_forms


def test_redirects_are_removed_and_recorded() -> None:
    (cmd,) = analyse("python x.py > out.log 2>&1 < in.txt").commands
    assert cmd.allow_form == "python x.py"
    writes = [r.target.value for r in cmd.redirects if r.writes and r.target]
    assert writes == ["out.log"]


def test_trailing_redirect_binds_to_last_command() -> None:
    first, second = analyse("cd /tmp && echo x > f").commands
    assert first.redirects == ()
    assert [r.target.value for r in second.redirects if r.target] == ["f"]
    assert first.top_level and second.top_level


def test_heredoc_redirect_target() -> None:
    (cmd,) = analyse("cat <<EOF > notes.txt\nhello $(whoami)\nEOF").commands[1:]
    assert [r.target.value for r in cmd.redirects if r.writes and r.target] == ["notes.txt"]
    assert analyse("cat <<EOF > notes.txt\nhello $(whoami)\nEOF").commands[0].text == "whoami"


@pytest.mark.parametrize(
    ("word_command", "value"),
    [("'rm' x", "rm"), ('"r"m x', "rm"), ("\\rm x", "rm"), ("r''m x", "rm")],
)
def test_quote_removal(word_command: str, value: str) -> None:
    (cmd,) = analyse(word_command).commands
    assert cmd.name == value


def test_parse_cache() -> None:
    assert analyse("git status") is analyse("git status")


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("git *", ["git", "git log", "git log -p"], ["gitk", "git2 x"]),
        ("npm:*", ["npm", "npm test"], ["npmx", "npm:test"]),
        ("ls*", ["ls", "lsof", "ls -la"], ["xls"]),
        ("npm * --prod", ["npm run --prod", "npm a b --prod"], ["npm --prod x"]),
        ("echo \\*", ["echo *"], ["echo a"]),
        ("git:* push", ["git:x push"], ["git push"]),
        ("* --version", ["node --version"], ["node -v"]),
        ("a * b *", ["a x b y", "a x b "], ["a x b"]),
    ],
)
def test_bash_patterns(pattern: str, matches: list[str], misses: list[str]) -> None:
    import re

    regex = re.compile(bash_pattern_regex(pattern)[0], re.DOTALL)
    for m in matches:
        assert regex.fullmatch(m), m
    for m in misses:
        assert not regex.fullmatch(m), m
