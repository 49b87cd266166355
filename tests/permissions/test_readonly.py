"""The built-in read-only set, through the public is_read_only_command."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.permissions.conftest import Tree
from toolrun.permissions import is_read_only_command
from toolrun.permissions.readonly import is_read_only_in


@pytest.mark.parametrize(
    "command",
    [
        "ls", "ls -la src", "cat src/a.py", "echo hi", "pwd", "head -n 5 src/a.py",
        "tail -f log.txt", "grep -rn foo src", "wc -l src/a.py", "which python", "diff a b",
        "stat src", "du -sh .", "find . -name '*.py'", "true", "false", "test -f x",
        "[ -d src ]", "sleep 1", "git status", "git log --oneline -5", "git diff HEAD~1",
        "git show HEAD:src/a.py", "git branch", "git branch -a", "git tag", "git remote -v",
        "git config --get user.name", "git stash list", "cd src", "cd src && ls",
        "git status | head -3", "echo $(git rev-parse HEAD)", "ls > /dev/null 2>&1",
        "ls src/*.py", "cat <<EOF\nhi\nEOF",
    ],
)  # fmt: skip
def test_read_only(command: str, tree: Tree) -> None:
    assert is_read_only_command(command, tree.ws, tree.ws), command


@pytest.mark.parametrize(
    "command",
    [
        "rm x", "npm test", "ls /etc", "cat /etc/passwd", "cat ../../x", "cat ~/.bashrc",
        "cd /tmp", "cd", "cd -", "cd src && git status", "find . -delete",
        "find . -exec rm {} \\;", "git push", "git commit -m x", "git branch -D x",
        "git branch new-branch", "git tag v1", "git config user.name x", "git -c a=b log",
        "git diff --output=x", "git stash", "echo hi > out.txt", "ls $HOME", "ls | sh",
        "eval ls", "PAGER=evil git log", "for f in *; do echo $f; done", "echo `rm x`",
        "export A=1", "A=1", "cat link_out", "ls escape_dir",
    ],
)  # fmt: skip
def test_not_read_only(command: str, tree: Tree) -> None:
    assert not is_read_only_command(command, tree.ws, tree.ws), command


def test_additional_directories(tree: Tree) -> None:
    command = f"cat {tree.shared}/x.txt"
    assert not is_read_only_command(command, tree.ws, tree.ws)
    assert is_read_only_in(command, tree.ws, [tree.ws, tree.shared])


def test_cwd_matters(tree: Tree, tmp_path: Path) -> None:
    assert is_read_only_command("cat a.py", tree.ws / "src", tree.ws)
    assert not is_read_only_command("cat a.py", tmp_path, tree.ws)
