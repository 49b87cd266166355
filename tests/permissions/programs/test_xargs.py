"""xargs: arguments from standard input are unknown, so it is never read-only."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree
from tests.permissions.programs.helpers import read_only


@pytest.mark.parametrize("command", ["xargs cat", "xargs -0 ls"])
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)
