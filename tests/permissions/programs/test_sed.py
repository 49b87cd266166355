"""sed: -i, w/W/r/R/e commands, s///e and s///w, scripts from files."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree
from tests.permissions.programs.helpers import analysable, read_only


@pytest.mark.parametrize("command", [
    "sed -n '/error/p' README.md", "sed 's/a/b/g' README.md", "sed -n '1,5p' README.md",
    "sed -e 's/x/y/' -e '/re/d' README.md", "sed '$!N;s/\\n/ /' README.md",
    "sed 'y/abc/xyz/' README.md",
])  # fmt: skip
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize("command", [
    "sed -i 's/a/b/' README.md", "sed -Ei 's/a/b/' README.md", "sed --in-place=.bak s/a/b/ f",
    "sed --in=.bak s/a/b/ f", "sed 'w out' README.md", "sed -n '1W out' README.md",
    "sed 'r /etc/passwd' README.md", "sed '1R x' README.md", "sed 's/a/b/w out' README.md",
    "sed -f script.sed README.md", "sed -n --expr='w /tmp/x' README.md",
    "sed --expression 'w x' README.md", "sed -ne 'w x' README.md", "sed --fi=s.sed README.md", "sed \"$S\" README.md", "sed -n '/x/{p;w out\n}' f",
])  # fmt: skip
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)


@pytest.mark.parametrize("command", [
    "sed -n '1e rm x' f", "sed 's/.*/rm x/e' f", "sed -e '/a/e ls' f", "sed '$e id' f",
    "sed -n -e p -e '1 e touch y' f",
])  # fmt: skip
def test_e_command_runs_code_and_is_not_analysable(command: str) -> None:
    assert not analysable(command)
