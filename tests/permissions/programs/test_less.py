"""less: ``+cmd`` (``+!cmd`` runs a shell command), ``-o`` log files, ``-k`` key files."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree
from tests.permissions.programs.helpers import read_only


@pytest.mark.parametrize("command", ["less README.md"])
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize(
    "command",
    [
        "less -k keys README.md",
        "less -so log README.md",
        "less +!id README.md",
        "less '+!id' README.md",
        "less -o log README.md",
        "less --log-file=x README.md",
    ],
)
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)
