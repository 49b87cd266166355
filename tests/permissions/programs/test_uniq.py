"""uniq: a second operand is a file it writes."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree
from tests.permissions.programs.helpers import read_only


@pytest.mark.parametrize("command", ["uniq README.md", "uniq -c README.md"])
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize("command", ["uniq README.md out.txt"])
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)
