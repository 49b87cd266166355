"""No code runs from inside a "read-only" builtin or expansion (issue 9 point 3).

Each command below was run under bash to check that it runs the substitution hidden
in a subscript, a prompt expansion or an arithmetic operand.
"""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree, decide
from toolrun.permissions.bash import analyse

CODE_RUNNING = [
    "test -v 'a[$(touch x)]'",
    "[ -v 'a[$(touch x)]' ]",
    "[[ -v 'a[$(touch x)]' ]]",
    "[[ -v a[i] ]]",
    "[[ $x -eq 1 ]]",
    "[[ 'a[$(touch x)]' -gt 0 ]]",
    "printf -v 'a[$(touch x)]' x",
    "read -r 'a[$(touch x)]' <<< x",
    "unset 'a[$(touch x)]'",
    "declare -a 'a[$(touch x)]=1'",
    "echo ${x@P}",
    'echo "${x@P}"',
    "echo ${x@E}",
    "echo ${x=$(touch y)}",
    'echo "${x:=a}"',
    "echo ${a[$i]}",
    "echo ${a[i]}",
    "echo ${!x}",
    "echo $((x + 1))",
    "echo $(( a[1] ))",
    "let x=1",
    "trap 'touch x' EXIT",
]


@pytest.mark.parametrize("command", CODE_RUNNING)
def test_code_running_builtins_and_expansions_are_not_analysable(command: str) -> None:
    assert not analyse(command).analysable


@pytest.mark.parametrize("command", CODE_RUNNING)
def test_they_are_never_allowed_by_default_or_under_bypass_with_a_deny(
    tree: Tree, command: str
) -> None:
    call = {"command": command}
    assert decide(tree, "Bash", call).decision != "allow"
    assert (
        decide(tree, "Bash", call, deny=("Bash(touch *)",), mode="bypassPermissions").decision
        != "allow"
    )


@pytest.mark.parametrize(
    "command",
    [
        "echo ${x}",
        "echo ${x:-d}",
        "echo ${#x}",
        "echo ${a[@]}",
        "echo ${a[0]}",
        "echo ${x:1:2}",
        "echo $((1 + 2))",
        "[[ -f x && 1 -eq 1 ]]",
        "test -f x",
        "printf '%s\\n' a",
    ],
)
def test_plain_reads_stay_analysable(command: str) -> None:
    analysis = analyse(command)
    assert analysis.analysable, analysis.problems


def test_printf_v_is_not_read_only(tree: Tree) -> None:
    # printf -v PATH ./bin; ls would run a planted ls.
    assert decide(tree, "Bash", {"command": "printf -v PATH ./bin; ls"}).decision == "ask"
    assert decide(tree, "Bash", {"command": "printf -vPATH ./bin"}).decision == "ask"
