"""base64: ``-o``/``--output`` writes a file."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree
from tests.permissions.programs.helpers import read_only


@pytest.mark.parametrize("command", ["base64 README.md", "base64 -d README.md"])
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize("command", ["base64 -o out README.md", "base64 --output=out README.md"])
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)
