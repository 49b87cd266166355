"""The parse is bash's parse, or the command is not analysable (issue 9 point 1)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.permissions.conftest import Tree, decide
from toolrun.permissions.bash import analyse

RM = ("Bash(rm *)",)


@pytest.mark.parametrize(
    "command",
    [
        "echo hi\n\\rm -rf build",  # tree-sitter reads one echo; bash runs rm
        "echo hi\n\\rm\t-rf build",
        "ls\n\\r\\m x",
        "echo ok \n\\rm x",
        "cat <<EOF > f; rm x\nhi\nEOF",
        "echo a\\\nb",
    ],
)
def test_trees_that_are_not_bashs_parse_are_not_analysable(command: str) -> None:
    assert not analyse(command).analysable


@pytest.mark.parametrize(
    "command",
    [
        "echo hi\nls",
        "git commit -m \"$(cat <<'EOF'\nfix: thing\nEOF\n)\"",
        "echo \"a\nb\" 'c\nd' $'e\\nf'",
        "ls \\\n  -la",
        "echo a>b 2>&1 <c",
        'x=1; echo ${x:-a b} "${y[@]}"',
        "find . -name '*.py' -exec grep -l x {} \\;",
        'grep -E "a|b" file | sort | uniq -c > out.txt',
        "echo a\\ b c\\;d",
        "a && \\\n  b",
        "cat > f <<EOF\nx\nEOF",
        "echo a#b # c",
    ],
)
def test_ordinary_commands_stay_analysable(command: str) -> None:
    analysis = analyse(command)
    assert analysis.analysable, analysis.problems


@pytest.mark.parametrize(
    "command",
    [
        "cat <<EOF | rm x\nhi\nEOF",
        "cat <<EOF && rm x\nhi\nEOF",
        "cat <<-EOF || rm x &\nhi\nEOF",
        "cat <<EOF ; rm x\nhi\nEOF",
    ],
)
def test_commands_after_a_heredoc_operator_are_seen(tree: Tree, command: str) -> None:
    assert decide(tree, "Bash", {"command": command}, deny=RM).decision != "allow"


@pytest.mark.parametrize(
    "command",
    [
        "echo hi\n\\rm -rf build",
        "r${E}m x",
        "$(echo rm) x",
        "`echo rm` x",
        "trap 'rm x' EXIT",
        "awk 'BEGIN{system(\"rm x\")}'",
        "sed -n '1e rm x'",
        'eval "$x"',
        'bash -c "$x"',
        "x=rm; $x y",
        "cat <<EOF > f; rm x\nhi\nEOF",
    ],
)
def test_bypass_asks_for_what_it_cannot_analyse_when_a_bash_deny_exists(
    tree: Tree, command: str
) -> None:
    call = {"command": command}
    assert decide(tree, "Bash", call, deny=RM, mode="bypassPermissions").decision == "ask"
    assert decide(tree, "Bash", call, ask=RM, mode="bypassPermissions").decision == "ask"


def test_bypass_without_rules_a_command_could_meet_still_allows_what_it_cannot_analyse(
    tree: Tree,
) -> None:
    call = {"command": "r${E}m x"}
    assert decide(tree, "Bash", call, mode="bypassPermissions").decision == "allow"
    assert (
        decide(tree, "Bash", call, deny=("mcp__evil",), mode="bypassPermissions").decision
        == "allow"
    )


@pytest.mark.parametrize("command", ["cat <> .env", "r${E}m .env", "$(echo cat) .env"])
def test_bypass_asks_for_what_it_cannot_analyse_when_a_file_rule_exists(
    tree: Tree, command: str
) -> None:
    # What toolrun cannot read may read or write the denied file.
    call = {"command": command}
    assert (
        decide(tree, "Bash", call, deny=("Read(.env)",), mode="bypassPermissions").decision
        != "allow"
    )


@pytest.mark.parametrize("command", [
    'echo "${x:-`rm y`}"', "echo ${x:-`rm y`}", "echo ${x:-$(rm y)}", 'echo "${x#`rm y`}"',
])  # fmt: skip
def test_substitutions_the_parser_reads_as_text_are_not_analysable(
    tree: Tree, command: str
) -> None:
    assert decide(tree, "Bash", {"command": command}).decision == "ask"
    assert (
        decide(tree, "Bash", {"command": command}, deny=RM, mode="bypassPermissions").decision
        != "allow"
    )


@pytest.mark.parametrize("command", [
    "cat <<EOF\n`rm y`\nEOF", "cat <<EOF\nx `rm y` z\nEOF", "cat <<EOF\n${x:-`rm y`}\nEOF",
    "cat <<-EOF\n\t`rm y`\n\tEOF",
])  # fmt: skip
def test_substitutions_in_unquoted_heredocs_are_seen(tree: Tree, command: str) -> None:
    assert decide(tree, "Bash", {"command": command}).decision == "ask"
    assert (
        decide(tree, "Bash", {"command": command}, deny=RM, mode="bypassPermissions").decision
        != "allow"
    )


def test_quoted_heredocs_are_text(tree: Tree) -> None:
    for command in ("cat <<'EOF'\n`rm y` $(rm y)\nEOF", 'cat <<"EOF"\n`x`\nEOF'):
        assert decide(tree, "Bash", {"command": command}).decision == "allow"


@pytest.mark.parametrize("command", ["echo $(ls", "echo `ls", "(cd x && ls", "ls | { wc"])
def test_a_token_the_parser_made_up_is_not_bash_s_parse(command: str) -> None:
    # a MISSING token (the parser closes `$(` for bash) is an anonymous leaf: the
    # fidelity walk still looks at it, whatever else it skips of such leaves
    from toolrun.permissions import fidelity
    from toolrun.permissions.treewords import parser as _parser

    source = command.encode()
    assert "the command does not parse as shell" in fidelity.problems(
        _parser().parse(source).root_node, source
    )
    assert not analyse(command).analysable


# tree-sitter leaves a leading `- ` or `\ ` out of the whole parse (the root starts after
# it) when an assignment follows: it reads `CI=1 git status`, bash runs a program named
# `-` (or ` CI=1`: `\ CI=1` is one word) with the rest as its arguments
DROPPED_FIRST_WORD = [
    "- CI=1 git status",
    "\\ CI=1 git status",
    "  -  CI=1 git status",
    "- A=1 B=2 git status",
]


@pytest.mark.parametrize("command", DROPPED_FIRST_WORD)
def test_a_first_word_the_parse_leaves_out_is_not_bash_s_parse(
    tree: Tree, command: str
) -> None:
    assert not analyse(command).analysable
    allowed = ("Bash(git status)", "Bash(git status *)")
    assert decide(tree, "Bash", {"command": command}, allow=allowed).decision != "allow"


@pytest.mark.parametrize("command", [" - CI=1 git status", "\\ CI=1 git status"])
def test_bash_runs_the_word_the_parse_left_out(tmp_path: Path, command: str) -> None:
    # a program named `-` (or ` CI=1`) on PATH: bash runs it, not git (as exec runs it:
    # `bash -c COMMAND`, which takes a string starting with `-` for an option)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    marker = tmp_path / "ran"
    for name in ("-", " CI=1"):  # (`\\ CI=1` is one word for bash)
        program = bindir / name
        program.write_text(f"#!/bin/sh\necho \"$@\" > {marker}\n")
        program.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"}
    subprocess.run(["bash", "-c", command], env=env, cwd=tmp_path, check=False)
    assert marker.read_text().endswith("git status\n")


@pytest.mark.parametrize(
    "command", ["  git status  ", "\ngit status\n\n", "# note\ngit status", "git status # c"]
)
def test_blank_lines_and_comments_around_a_command_stay_bash_s_parse(command: str) -> None:
    assert analyse(command).analysable
