"""git: global options, mutating forms, writing and program-running options, other repos."""

from __future__ import annotations

import subprocess

import pytest

from tests.permissions.conftest import Tree, decide
from tests.permissions.programs.helpers import read_only


@pytest.mark.parametrize("command", [
    "git status", "git log --oneline -5", "git diff HEAD~1", "git show HEAD:src/a.py",
    "git branch", "git branch -a", "git tag", "git tag -l", "git remote -v",
    "git config --get user.name", "git stash list", "git --no-pager log", "git -C src status",
    'git log --grep "$X"', "git worktree list",
])  # fmt: skip
def test_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize("command", [
    "git -c core.pager=evil log", "git -ccore.pager=evil log", "git --config-env=a=B log",
    "git --exec-path=/tmp log", "git --git-dir=/tmp/x status", "git --work-tree=/ status",
    "git -p log", "git --paginate log", "git diff --output=x", "git diff --outp=x",
    "git log --output x", "git diff --ext-diff", "git diff --textconv", "git log --textc",
    "git cat-file --filters HEAD:a", "git grep -O foo", "git grep --open-files-in-pager foo",
    "git branch new", "git branch -D x", "git branch -m a b", "git branch --set-upstream-to=o",
    "git tag v1", "git tag -d v1", "git tag -a v1 -m x", "git remote add o url",
    "git remote set-url o u", "git remote remove o", "git config user.name x",
    "git config --unset a.b", "git config --add a.b c", "git config -f other --list",
    "git stash", "git stash pop", "git stash drop", "git worktree add ../x",
    "git worktree remove x", "git reflog expire --all", "git push", "git commit -m x",
    "git log $OPT", "git log -{p,-output=x}", "git -C /tmp status", "git st",
])  # fmt: skip
def test_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)


def test_git_on_a_nested_repository_is_not_read_only(tree: Tree) -> None:
    nested = tree.ws / "vendor" / "lib"
    nested.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    assert not read_only(tree, "git -C vendor/lib status")
    # An earlier call's `cd vendor/lib` is the cwd of this one.
    call = {"command": "git status"}
    assert decide(tree, "Bash", call, cwd=nested).decision == "ask"
    assert decide(tree, "Bash", call, cwd=tree.ws).decision == "allow"


@pytest.mark.parametrize("command", [
    "git -C . push origin main", "git --no-pager push", "git -c a=b push", "git -Cx push",
    "git --git-dir=.git push", "git -P push origin", "timeout 5 git -C . push",
])  # fmt: skip
def test_ask_and_deny_rules_see_through_global_options(tree: Tree, command: str) -> None:
    call = {"command": command}
    assert decide(tree, "Bash", call, ask=("Bash(git push *)",)).decision == "ask"
    assert (
        decide(tree, "Bash", call, ask=("Bash(git push *)",), mode="bypassPermissions").decision
        == "ask"
    )
    assert decide(tree, "Bash", call, deny=("Bash(git push *)",)).decision == "deny"


def test_allow_rules_do_not_see_through_global_options(tree: Tree) -> None:
    call = {"command": "git -c core.sshCommand=evil push"}
    assert decide(tree, "Bash", call, allow=("Bash(git push *)",)).decision == "ask"


def test_git_diff_no_index_reads_are_checked(tree: Tree) -> None:
    call = {"command": "git diff --no-index README.md .env"}
    assert decide(tree, "Bash", call, deny=("Read(.env)",)).decision == "deny"
    outside = {"command": f"git diff --no-index README.md {tree.other}/secret.txt"}
    assert decide(tree, "Bash", outside).decision == "ask"
