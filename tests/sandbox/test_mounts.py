"""The mount plan: real paths, planted symlinks refused, placeholders that come and go."""

from __future__ import annotations

import os
from pathlib import Path

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
