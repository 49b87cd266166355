"""The mount plan: real paths, planted symlinks refused, placeholders that come and go."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.sandbox.conftest import SANDBOX_ON, bash, exec_plan, needs_bwrap, write
from toolrun.sandbox.mounts import held_placeholders, plan_mounts, trusted_realpath


def test_a_symlink_in_a_writable_place_is_not_trusted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "out").symlink_to("/etc")
    assert trusted_realpath(f"{ws}/out/x", [str(ws)]) is None
    assert trusted_realpath(f"{ws}/out/x", []) == "/etc/x"
    assert trusted_realpath(f"{ws}/missing/y", [str(ws)]) == f"{ws}/missing/y"


def test_allow_write_through_a_planted_symlink_is_left_out(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "out").symlink_to("/etc")
    plan = plan_mounts(roots=[str(ws)], allow_write=[f"{ws}/out", "/nonexistent"])
    assert "/etc" not in plan.writable
    assert plan.writable == (str(ws),)
    assert len(plan.skipped) == 2


def test_protected_entries_are_read_only_and_their_git_folder_pinned(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    write(ws / ".git" / "config", "")
    write(ws / ".envrc", "")
    write(ws / ".claude" / "settings.json", "{}")
    plan = plan_mounts(roots=[str(ws)])
    assert plan.pinned == (f"{ws}/.git",)
    for name in (".git/hooks", ".git/config", ".envrc", ".claude"):
        assert f"{ws}/{name}" in plan.read_only
    # Missing configuration files a later run would load: made for the call, read-only.
    assert plan.placeholders == (
        f"{ws}/toolrun.yaml/", f"{ws}/toolrun.yml/", f"{ws}/.mcp.json/", f"{ws}/.vscode/",
        f"{ws}/.idea/", f"{ws}/.gitmodules/", f"{ws}/.ripgreprc/", f"{ws}/.git/info/",
        f"{ws}/.git/commondir", f"{ws}/.git/config.worktree",
    )


def test_placeholders_last_the_run_and_shadow_no_configuration(tmp_path: Path) -> None:
    write(tmp_path / "toolrun.yaml", "permissions: {deny: [Bash]}\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    held_placeholders.ensure(plan_mounts(roots=[str(ws)]).placeholders)
    assert (ws / ".claude").is_dir() and (ws / "toolrun.yaml").is_dir()
    # Ours are still missing entries for the next call's plan.
    assert f"{ws}/.claude/" in plan_mounts(roots=[str(ws)]).placeholders
    # A run killed before it removes them leaves nothing a config search would read.
    from toolrun.config.loader import discover_config

    assert discover_config(ws) == tmp_path / "toolrun.yaml"
    held_placeholders.remove_all()
    assert os.listdir(ws) == []


def test_a_users_own_entries_are_never_removed(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    held_placeholders.ensure([f"{tmp_path}/.claude/", f"{tmp_path}/.git/"])
    write(tmp_path / ".git" / "HEAD", "made meanwhile\n")
    held_placeholders.remove_all()
    assert (tmp_path / ".claude").is_dir() and (tmp_path / ".git" / "HEAD").is_file()


@needs_bwrap
def test_concurrent_sandboxed_calls_share_placeholders(ws: Path) -> None:
    calls = [bash(f"ls -a > /dev/null; echo {i}") for i in range(8)]
    results, _ = exec_plan(ws, SANDBOX_ON, calls)
    assert [r["status"] for r in results] == ["ok"] * 8
    assert sorted(os.listdir(ws)) == [".toolrun", "toolrun.yaml"]


def test_submodules_and_a_hooks_path_in_the_workspace_are_read_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / ".git" / "config", "[core]\n\thooksPath = scripts/hooks\n")
    (ws / ".git" / "modules" / "lib" / "hooks").mkdir(parents=True)
    (ws / "scripts" / "hooks").mkdir(parents=True)
    plan = plan_mounts(roots=[str(ws)])
    assert f"{ws}/.git/modules" in plan.read_only
    assert f"{ws}/scripts/hooks" in plan.read_only


def test_a_missing_hooks_path_is_held_empty_for_the_call(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / ".git" / "config", "[core]\n\thooksPath = .githooks\n")
    plan = plan_mounts(roots=[str(ws)])
    assert f"{ws}/.githooks/" in plan.placeholders
    assert f"{ws}/.githooks" in plan.read_only


def test_the_configuration_surface_is_one_table_with_files_git_can_read(tmp_path: Path) -> None:
    """A missing ``commondir`` or ``config.worktree`` is held by a file git reads as
    harmless (a directory there makes git fail), removed at the end only if still ours."""
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    write(ws / ".git" / "config", "[core]\n")
    plan = held_placeholders.hold(plan_mounts(roots=[str(ws)]))
    try:
        assert (ws / ".git" / "commondir").read_text() == ".\n"
        assert (ws / ".git" / "config.worktree").read_text() == ""
        for name in (".vscode", ".idea", ".gitmodules", ".ripgreprc", ".git/info"):
            assert (ws / name).is_dir() and f"{ws}/{name}" in plan.read_only, name
        for name in (".git/commondir", ".git/config.worktree"):
            assert f"{ws}/{name}" in plan.read_only, name
        (ws / ".git" / "config.worktree").write_text("[core]\n")  # the user's own, meanwhile
    finally:
        held_placeholders.remove_all()
    assert not (ws / ".git" / "commondir").exists() and not (ws / ".vscode").exists()
    assert (ws / ".git" / "config.worktree").read_text() == "[core]\n"


def _hide(command: str) -> str:
    import base64

    return f'eval "$(echo {base64.b64encode(command.encode()).decode()} | base64 -d)"'


SURFACE_WRITES = [  # what srt blocks and toolrun's sandbox let through (#25), four ways each
    "mkdir -p $(dirname {t}); echo x > {t}",
    "mkdir -p $(dirname {t}); cp /etc/hostname {t}",
    "mkdir -p $(dirname {t}); tee -a {t} < /etc/hostname",
    ("python3 -c \"import os; os.makedirs(os.path.dirname('{t}') or '.', exist_ok=True); "
    "open('{t}', 'a').write('x')\""),
]


@needs_bwrap
@pytest.mark.parametrize("target", [".vscode/settings.json", ".gitmodules", ".ripgreprc",
                                    ".idea/workspace.xml", ".git/commondir",
                                    ".git/info/attributes"])
def test_the_sandbox_keeps_the_configuration_surface(ws: Path, target: str) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    info = ws / ".git" / "info"
    for entry in sorted(info.glob("*")):
        entry.unlink()
    info.rmdir()  # (a missing info/ is held too)
    before = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*"))
    calls = [bash(_hide(s.format(t=target))) for s in SURFACE_WRITES]
    results, done = exec_plan(ws, SANDBOX_ON, calls)
    assert [r["status"] for r in results] == ["error"] * 4, done.stderr
    assert all(r["metadata"]["sandbox"]["sandboxed"] for r in results)
    after = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*"))
    assert [p for p in after if p not in before and not p.startswith(".toolrun")] == \
        ["toolrun.yaml"]


def test_a_hooks_path_in_the_users_git_config_is_held_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``core.hooksPath = .githooks`` in ``~/.gitconfig`` (or the XDG one) runs the hooks of
    every repository's ``.githooks``: one a command could create there."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    write(home / ".gitconfig", "[core]\n\thooksPath = .githooks\n")
    write(home / "xdg" / "git" / "config", "[core]\n\thookspath = tools/hooks\n")
    write(ws / ".git" / "config", "[core]\n")
    (ws / "tools").mkdir()
    plan = plan_mounts(roots=[str(ws)])
    assert f"{ws}/.githooks/" in plan.placeholders and f"{ws}/tools/hooks/" in plan.placeholders
