"""sort: ``-o`` writes, ``--compress-program`` runs a program, ``--files0-from`` reads."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree
from tests.permissions.programs.helpers import read_only


@pytest.mark.parametrize(
    "command", ["sort README.md", "sort -k2 -t, README.md", "sort -u README.md"]
)
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize(
    "command",
    [
        "sort -o out README.md",
        "sort -uo out README.md",
        "sort --output=out README.md",
        "sort --out=x README.md",
        "sort --compress-program=sh README.md",
        "sort --compress=sh README.md",
        "sort --files0-from=/etc/x",
        "sort $OPT README.md",
    ],
)
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)
