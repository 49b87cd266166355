"""The protected list covers the twins of what it names (issue 24, point 8).

Each twin is a file git, rg or an editor reads as configuration (one line there is a
command run later). A write to it asks in every mode, bypassPermissions and acceptEdits
included, and is marked protected so neither "always" nor ``--ask allow`` approves it:
through the Write and Edit tools and through a Bash redirect, ``cp`` and ``tee``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.permissions import Decision
from toolrun.permissions.paths import Boundary, protected_reason, resolve

from .conftest import Tree, decide

# (path as a command writes it, source). "~" is the test home; the workspace is ~/proj.
TWINS = [
    (".ripgreprc", "sandbox-runtime DANGEROUS_FILES"),
    ("sub/.ripgreprc", "sandbox-runtime DANGEROUS_FILES (any depth)"),
    (".gitmodules", "sandbox-runtime DANGEROUS_FILES, Claude Code protected paths"),
    (".vscode/settings.json", "sandbox-runtime DANGEROUS_DIRECTORIES"),
    (".vscode/tasks.json", "sandbox-runtime DANGEROUS_DIRECTORIES"),
    (".idea/workspace.xml", "sandbox-runtime DANGEROUS_DIRECTORIES"),
    ("~/.config/git/config", "git-config(1) XDG user config, issue 24"),
    ("~/.config/git/attributes", "git-config(1) core.attributesFile default, issue 24"),
    ("/etc/gitconfig", "git-config(1) system config, issue 24"),
    ("~/.gitconfig", "Claude Code protected paths, sandbox-runtime DANGEROUS_FILES"),
    (".git/commondir", "gitrepository-layout(5), issue 24"),
    (".git/info/attributes", "gitrepository-layout(5), issue 24"),
    (".git/info/exclude", "gitrepository-layout(5), issue 24"),
    (".git/worktrees/wt/config.worktree", "gitrepository-layout(5), issue 24"),
    (".git/worktrees/wt/HEAD", "gitrepository-layout(5), issue 24"),
    (".git/modules/lib/config", "gitrepository-layout(5), issue 24"),
    (".git/config.worktree", "git-worktree(1) extensions.worktreeConfig"),
    (".git/hooks/pre-commit", "sandbox-runtime (.git/hooks), Claude Code"),
    (".GIT/hooks/pre-commit", "sandbox-runtime normalizeCaseForComparison (macOS)"),
    (".VSCode/tasks.json", "sandbox-runtime normalizeCaseForComparison (macOS)"),
    ("mirror.git/hooks/post-update", "by hand (git init --bare mirror.git)"),
    ("mirror.git/config", "by hand (git init --bare mirror.git)"),
]
#: Next to the twins and not protected (the everyday files around them).
ORDINARY = [
    (".gitattributes", "decided: attributes only name drivers (see paths.py)"),
    ("config/git.yaml", "by hand"),
    ("src/git/config.py", "by hand (git/ not below .config/)"),
    (".github/workflows/ci.yml", "by hand"),
    ("docs/gitconfig.md", "by hand"),
    ("widget.git.py", "by hand"),
]
MODES = ["bypassPermissions", "acceptEdits"]


def _absolute(tree: Tree, path: str) -> str:
    if path.startswith("~/"):
        return str(tree.home / path[2:])
    return path if path.startswith("/") else str(tree.ws / path)


def _ways(tree: Tree, path: str) -> list[tuple[str, dict[str, str]]]:
    full = _absolute(tree, path)
    return [
        ("Write", {"file_path": full, "content": "x"}),
        ("Edit", {"file_path": full, "old_string": "a", "new_string": "b"}),
        ("Bash", {"command": f"echo '[core] fsmonitor = x' > {path}"}),
        ("Bash", {"command": f"cp README.md {path}"}),
        ("Bash", {"command": f"echo x | tee -a {path}"}),
    ]


def _protected_ask(decision: Decision) -> bool:
    return decision.decision == "ask" and bool(decision.protected)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("path", "source"), TWINS, ids=[t[0] for t in TWINS])
def test_a_write_to_a_twin_asks_in_every_mode_and_no_one_but_a_person_approves_it(
    tree: Tree, mode: str, path: str, source: str
) -> None:
    for tool, input in _ways(tree, path):
        decision = decide(tree, tool, input, mode=mode)
        assert _protected_ask(decision), (source, tool, input, decision.reason)


@pytest.mark.parametrize(("path", "source"), ORDINARY, ids=[t[0] for t in ORDINARY])
def test_the_files_beside_the_twins_stay_ordinary_edits(
    tree: Tree, path: str, source: str
) -> None:
    for tool, input in _ways(tree, path):
        decision = decide(tree, tool, input, mode="bypassPermissions")
        assert decision.decision == "allow", (source, tool, input, decision.reason)
        assert not decision.protected


def test_the_workspace_below_a_protected_name_is_not_protected_itself() -> None:
    # (a workspace in ~/.config/git-tools or under a bare mirror's parent stays editable)
    boundary = Boundary(("/h/.config/git-tools",))
    assert protected_reason(resolve("/h/.config/git-tools/a.py", "/", "/h"), boundary) is None
    assert protected_reason(resolve("/h/.config/git/config", "/", "/h"), boundary) is not None


def test_the_sandbox_keeps_the_git_twins_read_only_and_invents_none(tmp_path: Path) -> None:
    """The sandbox's own list: existing twins are bound read-only; a missing ``commondir``
    is held by a file naming the repository itself, never a directory (a directory there
    would make every git command fail)."""
    from toolrun.sandbox.mounts import plan_mounts

    ws = tmp_path / "ws"
    for d in (".git/info", ".git/worktrees/wt", ".git/hooks"):
        (ws / d).mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / ".git" / "config.worktree").write_text("[core]\n")
    (ws / ".ripgreprc").write_text("--hidden\n")
    plan = plan_mounts(roots=[str(ws)])
    for twin in (".git/info", ".git/worktrees", ".git/config.worktree", ".ripgreprc"):
        assert f"{ws}/{twin}" in plan.read_only, twin
    assert [p for p in plan.placeholders if "commondir" in p] == [f"{ws}/.git/commondir"]
