"""The read-only jail at the kernel level, without the command reading (#25, points 1, 3).

The round-3 scene's deny rules decide the masks through the real engine; commands run on
the jail's side process directly, so what the engine would refuse first runs anyway.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.round3.scene import Scene
from toolrun.reaper import jail as jails
from toolrun.reaper.run import run_command
from toolrun.sandbox.availability import probe
from toolrun.sandbox.jail import (
    JailPlan,
    blocked_writes,
    jail_argv,
    jail_folders,
    plan_jail,
    take_cwd,
    widen,
)

needs_bwrap = pytest.mark.skipif(not probe().ok, reason=f"no jail here: {probe().reason}")


def _run(jail: jails.Jail, command: str, cwd: Path) -> tuple[int | None, str]:
    out: list[bytes] = []

    async def go() -> int | None:
        token = jails.current.set(jail)
        try:
            return await run_command(["bash", "-c", command], cwd=cwd, env=dict(os.environ),
                                     time_limit=10, stdout=out.append)
        finally:
            jails.current.reset(token)

    code = asyncio.run(go())
    return code, b"".join(out).decode(errors="replace")


@pytest.fixture
def scene_jail(tmp_path: Path) -> Iterator[tuple[Scene, jails.Jail]]:
    """The round-3 scene and a jail masking its Read-denied files, ended after the test."""
    scene, jail = _scene_jail(tmp_path)
    try:
        yield scene, jail
    finally:
        jail.close()


def _scene_jail(tmp_path: Path) -> tuple[Scene, jails.Jail]:
    from tests.permissions.conftest import make_config
    from toolrun.execution.jailing import read_denied
    from toolrun.permissions import PermissionEngine

    scene = Scene.make(tmp_path)
    engine = PermissionEngine(make_config(scene.ws, deny=["Read(./.env)", "Read(./config/.env)"]))
    plan = plan_jail([str(scene.ws)], read_denied(engine) or (lambda _: False))
    found = probe()
    assert found.bwrap is not None
    return scene, jails.Jail(found.bwrap, plan)


MASKED = [  # (command, source): each reads a Read-denied file its own way
    ("cat .env", "round-3 escape"),
    ("head -c 100 config/.env", "round-3 escape"),
    ("cat src/link/../ws/.env", "by hand"),
    ("python3 -c 'print(open(\".e\" + \"nv\").read())'", "Claude Code advisory"),
]


@needs_bwrap
def test_read_denied_files_are_masked_whatever_the_spelling(
    scene_jail: tuple[Scene, jails.Jail],
) -> None:
    scene, jail = scene_jail
    assert jail.plan.unreadable_files == (str(scene.ws / ".env"), str(scene.ws / "config/.env"))
    for command, source in MASKED:
        _, output = _run(jail, command, scene.ws)
        assert "sentinel" not in output, (command, source)


GIT_SURFACE = [
    ("echo /tmp > .git/commondir; git status", "round-3 escape"),
    ("git config core.fsmonitor 'touch ../pwned'", "Claude Code advisory"),
    ("echo 'touch ../pwned' > .git/hooks/pre-commit", "sandbox-runtime tests"),
    ("printf '[core]\\n\\tfsmonitor = touch ../pwned\\n' >> .git/config", "by hand"),
]


@needs_bwrap
def test_the_git_configuration_cannot_be_written(scene_jail: tuple[Scene, jails.Jail]) -> None:
    scene, jail = scene_jail
    for command, source in GIT_SURFACE:
        _run(jail, command, scene.ws)
        assert scene.changed() == [], source
    _run(jail, "git status", scene.ws)
    assert not (scene.tmp / "pwned").exists()


def test_plan_jail_masks_directories_whole_and_skips_git(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "a").write_text("x")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.env").write_text("x")
    (tmp_path / "b.env").write_text("x")
    plan = plan_jail([str(tmp_path)], lambda p: p.endswith((".env", "/secrets")))
    assert plan == JailPlan("read-only", (str(tmp_path / "secrets"),), (str(tmp_path / "b.env"),))


def test_jail_argv_is_read_only_offline_and_masks_last() -> None:
    argv = jail_argv("bwrap", JailPlan(unreadable_files=("/w/.env",)), jail_folders(), ["py"],
                     unreadable_file="/u")
    assert argv[:5] == ["bwrap", "--ro-bind", "/", "/", "--dev"]
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--bind" in argv
    assert argv[-7:] == ["--ro-bind", "/u", "/w/.env", "--chdir", "/", "--", "py"]
    assert argv[-1] == "py"


def test_blocked_writes_name_the_real_place(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "link").symlink_to(tmp_path / "out")
    (tmp_path / "out").mkdir()
    line = "bash: line 1: link/../x: Read-only file system"
    assert blocked_writes(line, str(tmp_path / "ws")) == [
        f"read-only jail: write to {tmp_path}/x blocked"
    ]


def test_take_cwd_does_not_follow_a_planted_link(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("SECRET")
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.symlink_to(secret)
    take_cwd(str(inside), str(outside))
    assert not outside.exists()
    inside.unlink()
    inside.write_text("/work\n")
    take_cwd(str(inside), str(outside))
    assert outside.read_text() == "/work\n" and not inside.exists()


def test_the_workspace_jail_binds_the_roots_writable_and_their_git_whole_read_only(
    tmp_path: Path,
) -> None:
    from toolrun.sandbox.mounts import held_placeholders

    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    try:
        plan = widen(JailPlan(unreadable_files=(f"{tmp_path}/.env",)), "workspace",
                     roots=[str(tmp_path)], deny_write=[str(tmp_path / "docs")])
    finally:
        held_placeholders.remove_all()
    assert plan.kind == "workspace" and plan.place == "workspace jail"
    assert plan.mounts.writable == (str(tmp_path),)
    for path in (".git", ".git/hooks", "docs", ".vscode", ".gitmodules"):
        assert f"{tmp_path}/{path}" in plan.mounts.read_only, path
    argv = jail_argv("bwrap", plan, jail_folders(), ["py"], unreadable_file="/u")
    assert argv[:4] == ["bwrap", "--ro-bind", "/", "/"] and "--unshare-net" in argv
    # writable first, then what stays read-only in it, then the masks
    assert argv.index("--bind") < argv.index(f"{tmp_path}/.git") < argv.index("/u")


def test_the_masks_only_jail_writes_everywhere_but_keeps_the_rules(tmp_path: Path) -> None:
    from toolrun.sandbox.mounts import held_placeholders

    home, ws = tmp_path / "home", tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    home.mkdir()
    (home / ".bashrc").write_text("# rc\n")
    try:
        plan = widen(JailPlan(), "masks", roots=[str(ws)], home=str(home))
    finally:
        held_placeholders.remove_all()
    assert f"{home}/.bashrc" in plan.mounts.read_only and not (home / ".vscode").exists()
    assert f"{ws}/.git" in plan.mounts.pinned and f"{ws}/.git" not in plan.mounts.read_only
    argv = jail_argv("bwrap", plan, jail_folders(), ["py"], unreadable_file="/u",
                     own=("/own",))
    assert argv[:4] == ["bwrap", "--bind", "/", "/"] and "--dev-bind" in argv
    assert "--unshare-net" not in argv and "--unshare-pid" in argv
    assert ["--ro-bind", "/own", "/own"] == argv[argv.index("/own") - 1: argv.index("/own") + 2]
    assert "--tmpfs" not in argv  # the user's own TMPDIR, as configured
