"""tree: ``-o`` writes a file."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree
from tests.permissions.programs.helpers import read_only


@pytest.mark.parametrize("command", ["tree", "tree -L 2 src"])
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize("command", ["tree -o out", "tree -oout", "tree -ao out"])
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)
