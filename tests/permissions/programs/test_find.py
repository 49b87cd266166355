"""find: actions that run or delete, and words bash turns into actions."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree, decide
from tests.permissions.programs.helpers import read_only


@pytest.mark.parametrize("command", [
    "find . -name '*.py'", "find src -type f -newer README.md", "find . -maxdepth 2 -print",
    "find . -name \"$x\"",
])  # fmt: skip
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize("command", [
    "find . -delete", "find . -exec rm {} ;", "find . -execdir rm {} +", "find . -ok rm {} ;",
    "find . -okdir rm {} ;", "find . -fprint out", "find . -fprint0 out", "find . -fls out",
    "find . -fprintf out %p", "find . -{delete,print}", "find . -del*", "find . $ACTION",
    "find . -newer /etc/passwd",
])  # fmt: skip
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)


@pytest.mark.parametrize("command", ["find . -{delete,print}", "find . -del*", "find . $A"])
def test_an_allow_rule_does_not_trust_expanded_words(tree: Tree, command: str) -> None:
    assert decide(tree, "Bash", {"command": command}, allow=("Bash(find *)",)).decision == "ask"


def test_a_file_named_like_an_action_makes_a_glob_ask(tree: Tree) -> None:
    trap = tree.ws / "-delete"
    trap.write_text("")
    try:
        assert not read_only(tree, "find . *")
        assert not read_only(tree, "ls *")
    finally:
        trap.unlink()
    assert read_only(tree, "ls *.md")
