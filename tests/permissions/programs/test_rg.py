"""ripgrep: ``--pre``, ``--hostname-bin`` and ``-z`` run programs; ``-f`` reads a file."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree
from tests.permissions.programs.helpers import read_only


@pytest.mark.parametrize("command", ["rg foo", "rg -n foo src", "rg -g '*.py' foo"])
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize(
    "command",
    [
        "rg --pre ./x foo",
        "rg --pre=./x foo",
        "rg --hostname-bin ./x foo",
        "rg -z foo",
        "rg --search-zip foo",
        "rg -f /etc/passwd src",
    ],
)
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)
