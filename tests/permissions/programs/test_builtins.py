"""Builtins that assign or evaluate: printf -v, test -v, read/unset subscripts, trap, alias."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree
from tests.permissions.programs.helpers import analysable, read_only


@pytest.mark.parametrize("command", ["printf '%s\\n' a", "test -f README.md", "[ -d src ]"])
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize("command", ["printf -v PATH ./bin", "printf -vX y", "test -v HOME"])
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)


@pytest.mark.parametrize(
    "command",
    [
        "read -r 'a[$(touch x)]' <<< x",
        "unset 'a[i]'",
        "trap 'rm x' EXIT",
        "alias ls=rm",
        "hash -p /bin/rm ls",
        "source /dev/stdin <<< x",
        "let x=1",
    ],
)
def test_code_running_forms_are_not_analysable(command: str) -> None:
    assert not analysable(command)
