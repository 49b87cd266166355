"""grep: ``-f FILE`` reads a file, checked like any file argument."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree
from tests.permissions.programs.helpers import read_only


@pytest.mark.parametrize("command", ["grep -rn foo src", "grep -f README.md src/a.py"])
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize("command", ["grep -f /etc/passwd src"])
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)
