"""sort, rg, base64, uniq, tree, less, xargs, grep: the options that write, run or read."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree
from tests.permissions.programs.helpers import read_only


@pytest.mark.parametrize("command", [
    "sort README.md", "sort -k2 -t, README.md", "sort -u README.md", "uniq README.md",
    "uniq -c README.md", "base64 README.md", "base64 -d README.md", "tree", "tree -L 2 src",
    "rg foo", "rg -n foo src", "rg -g '*.py' foo", "less README.md", "grep -rn foo src",
    "grep -f README.md src/a.py",
])  # fmt: skip
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize("command", [
    "sort -o out README.md", "sort -uo out README.md", "sort --output=out README.md",
    "sort --out=x README.md", "sort --compress-program=sh README.md",
    "sort --compress=sh README.md", "rg --pre ./x foo", "rg --pre=./x foo",
    "rg --hostname-bin ./x foo", "rg -z foo", "rg --search-zip foo", "base64 -o out README.md",
    "base64 --output=out README.md", "uniq README.md out.txt", "tree -o out", "tree -oout", "tree -ao out",
    "less -k keys README.md", "less -so log README.md",
    "less +!id README.md", "less '+!id' README.md", "less -o log README.md",
    "less --log-file=x README.md", "xargs cat", "xargs -0 ls", "grep -f /etc/passwd src",
    "sort --files0-from=/etc/x", "rg -f /etc/passwd src", "sort $OPT README.md",
])  # fmt: skip
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)
