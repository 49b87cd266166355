"""The Bash tool under the sandbox: what it may touch, and everything Bash does still works."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from tests.sandbox.conftest import (
    SANDBOX_ON,
    bash,
    exec_argv,
    exec_plan,
    needs_bwrap,
    processes_with,
    wait_until,
    write,
)
from toolrun.config.loader import load_config
from toolrun.errors import ToolTimeoutError
from toolrun.sandbox.policy import SandboxPolicy
from toolrun.tools.base import ToolContext, ToolOutput
from toolrun.tools.builtins.bash import BashInput, BashTool

pytestmark = [needs_bwrap, pytest.mark.anyio]


def context(ws: Path, config: str = SANDBOX_ON, cwd: Path | None = None) -> ToolContext:
    write(ws / "toolrun.yaml", config)
    policy = SandboxPolicy.of(load_config(workspace=ws))
    return ToolContext(workspace=ws, cwd=cwd or ws, sandbox=policy)


async def run(ctx: ToolContext, command: str, **extra: object) -> ToolOutput:
    return await BashTool().run(BashInput.model_validate({"command": command, **extra}), ctx)


async def test_writes_land_in_the_workspace_and_nowhere_else(ws: Path, tmp_path: Path) -> None:
    out = await run(context(ws), "echo in > inside.txt && echo out > ../outside.txt; echo done")
    assert (ws / "inside.txt").read_text() == "in\n"
    assert not (tmp_path / "outside.txt").exists()
    assert "Read-only file system" in out.output
    assert f"[sandbox] write outside the sandbox blocked: {tmp_path}/outside.txt" in out.output
    assert out.metadata["sandbox"]["sandboxed"] is True


async def test_additional_directories_and_allow_write_are_writable(
    ws: Path, tmp_path: Path
) -> None:
    extra, build = tmp_path / "extra", tmp_path / "build"
    extra.mkdir()
    build.mkdir()
    config = (
        f"permissions:\n  additionalDirectories: ['{extra}']\n"
        f"sandbox:\n  enabled: true\n  filesystem:\n    allowWrite: ['{build}']\n"
    )
    out = await run(context(ws, config), f"echo a > {extra}/a && echo b > {build}/b")
    assert not out.is_error, out.output
    assert (extra / "a").read_text() == "a\n"
    assert (build / "b").read_text() == "b\n"


async def test_deny_write_keeps_a_workspace_path_read_only(ws: Path) -> None:
    write(ws / "locked" / "file", "kept\n")
    config = "sandbox:\n  enabled: true\n  filesystem:\n    denyWrite: ['./locked']\n"
    out = await run(context(ws, config), "echo x > locked/file; echo y > free")
    assert (ws / "locked" / "file").read_text() == "kept\n"
    assert (ws / "free").read_text() == "y\n"
    assert f"write to a protected path blocked by the sandbox: {ws}/locked/file" in out.output


async def test_deny_read_makes_files_and_folders_unreadable(ws: Path, tmp_path: Path) -> None:
    write(tmp_path / "keys" / "id", "private\n")
    write(tmp_path / "token", "token\n")
    config = (
        f"sandbox:\n  enabled: true\n  filesystem:\n"
        f"    denyRead: ['{tmp_path}/keys', '{tmp_path}/token']\n"
    )
    out = await run(
        context(ws, config), f"cat {tmp_path}/keys/id; cat {tmp_path}/token; ls {tmp_path}/keys"
    )
    assert "private" not in out.output and "token\n" not in out.output
    assert out.output.count("Permission denied") == 3


async def test_the_working_directory_carries(ws: Path) -> None:
    (ws / "sub").mkdir()
    ctx = context(ws)
    out = await run(ctx, "cd sub && pwd")
    assert out.output == f"{ws}/sub\n"
    assert out.metadata["cwd"] == f"{ws}/sub"


def test_cd_carries_from_call_to_call_in_a_plan(ws: Path) -> None:
    (ws / "sub").mkdir()
    plan = {"turns": [{"calls": [bash("cd sub")]}, {"calls": [bash("pwd")]}]}
    results, _ = exec_plan(ws, SANDBOX_ON, json.dumps(plan))
    assert results[1]["output"] == f"{ws}/sub\n"


async def test_a_timeout_ends_every_process_of_the_call(
    ws: Path, no_leftovers: Callable[[str], list[int]]
) -> None:
    with pytest.raises(ToolTimeoutError):
        await run(context(ws), "setsid sleep 992.21 & sleep 992.22", timeout=500)
    # The kernel ends the PID namespace's processes just after bwrap itself.
    assert wait_until(lambda: not no_leftovers("992.2"))


async def test_background_children_holding_the_output_are_killed(
    ws: Path, no_leftovers: Callable[[str], list[int]]
) -> None:
    out = await run(context(ws), "sleep 992.31 & echo started")
    assert out.output == "started\n"
    assert wait_until(lambda: not no_leftovers("992.31"))


def start_exec(ws: Path, command: str, marker: str, running: int) -> subprocess.Popen[str]:
    """``toolrun exec`` of one sandboxed Bash call, once ``running`` of its processes run."""
    write(ws / "toolrun.yaml", SANDBOX_ON)
    plan = write(ws.parent / "plan.json", json.dumps({"calls": [bash(command)]}))
    proc = subprocess.Popen(
        exec_argv(plan, ws),
        cwd=ws,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_until(lambda: len(processes_with(marker)) >= running), "it never started"
    return proc


def test_ctrl_c_interrupts_a_sandboxed_call_and_ends_its_processes(
    ws: Path, no_leftovers: Callable[[str], list[int]]
) -> None:
    proc = start_exec(ws, "setsid sleep 992.41 & sleep 992.42", "992.4", 2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert '"status": "interrupted"' in out
    assert wait_until(lambda: not no_leftovers("992.4"))


def test_sigkill_of_toolrun_ends_a_running_sandboxed_call(
    ws: Path, no_leftovers: Callable[[str], list[int]]
) -> None:
    command = "setsid sleep 992.51 & nohup sleep 992.52 & sleep 992.53"
    proc = start_exec(ws, command, "992.5", 3)
    proc.kill()
    proc.communicate()
    # bwrap dies with toolrun (--die-with-parent), and the call's PID namespace with it.
    assert wait_until(lambda: not no_leftovers("992.5"))


async def test_a_private_temporary_folder_that_lasts_the_run(ws: Path) -> None:
    ctx = context(ws)
    first = await run(ctx, 'echo kept > "$TMPDIR/note" && echo "$TMPDIR"')
    second = await run(ctx, 'cat "$TMPDIR/note"; echo x > /tmp/shared-by-all')
    assert second.output.startswith("kept\n")
    assert "write outside the sandbox blocked: /tmp/shared-by-all" in second.output
    assert not first.output.startswith("/tmp/\n")


async def test_dangerously_disable_sandbox_runs_outside_when_allowed(
    ws: Path, tmp_path: Path
) -> None:
    out = await run(context(ws), "echo out > ../outside.txt", dangerouslyDisableSandbox=True)
    assert (tmp_path / "outside.txt").read_text() == "out\n"
    assert out.metadata["sandbox"] == {
        "sandboxed": False,
        "reason": "runs unsandboxed: dangerouslyDisableSandbox is set",
    }


async def test_excluded_commands_run_outside(ws: Path, tmp_path: Path) -> None:
    config = "sandbox:\n  enabled: true\n  excludedCommands: ['touch *']\n"
    ctx = context(ws, config)
    await run(ctx, f"touch {tmp_path}/made")
    assert (tmp_path / "made").exists()
    # Only when every part is excluded: the rest would run unsandboxed too.
    await run(ctx, f"touch {tmp_path}/made2 && echo x > {tmp_path}/made3")
    assert not (tmp_path / "made2").exists()


async def test_asked_to_leave_but_not_allowed_to_it_stays_inside(ws: Path, tmp_path: Path) -> None:
    config = "sandbox:\n  enabled: true\n  allowUnsandboxedCommands: false\n"
    await run(context(ws, config), "echo out > ../o", dangerouslyDisableSandbox=True)
    assert not (tmp_path / "o").exists()


async def test_read_and_edit_deny_rules_hold_inside_the_sandbox_too(ws: Path) -> None:
    write(ws / ".env", "SECRET=1\n")
    write(ws / "vendor" / "lib.py", "kept\n")
    config = (
        "permissions:\n  deny: ['Read(./.env)', 'Edit(vendor/**)', 'Read(src/*.key)']\n"
        "sandbox:\n  enabled: true\n"
    )
    # Code the rules cannot see into: only the sandbox stops it.
    out = await run(
        context(ws, config),
        "python3 -c \"print(open('.env').read())\"; "
        "python3 -c \"open('vendor/lib.py', 'w').write('changed')\"",
    )
    assert "SECRET" not in out.output
    assert (ws / "vendor" / "lib.py").read_text() == "kept\n"


async def test_a_blocked_write_after_cd_names_the_right_path(ws: Path, tmp_path: Path) -> None:
    out = await run(context(ws), "cd .. && echo pwned > sentinel")
    assert f"[sandbox] write outside the sandbox blocked: {tmp_path}/sentinel" in out.output


async def test_shared_memory_works_and_stays_private(ws: Path) -> None:
    out = await run(
        context(ws),
        'python3 -c "import multiprocessing as m; print(m.Lock())"; '
        "echo x > /dev/shm/sandboxed-note && echo written",
    )
    assert "Lock(owner=None)" in out.output and "written" in out.output
    assert not await anyio.Path("/dev/shm/sandboxed-note").exists()


@pytest.mark.parametrize(("command", "code"), [("kill -KILL $$", 137), ("kill -TERM $$", 143)])
async def test_a_shell_killed_by_a_signal_reports_128_plus_n(
    ws: Path, command: str, code: int
) -> None:
    out = await run(context(ws), command)
    assert out.metadata["exit_code"] == code
    assert out.output == ""  # and nothing says "Killed" that a bare shell would not


async def test_the_command_sees_the_descriptors_a_bare_one_does(ws: Path) -> None:
    out = await run(context(ws), "ls /proc/self/fd | tr '\\n' ' '")
    assert out.output == "0 1 2 3 "


def test_a_workspace_no_one_can_write_to_still_runs(ws: Path, tmp_path: Path) -> None:
    write(ws / "toolrun.yaml", SANDBOX_ON)
    plan = write(tmp_path / "plan.json", json.dumps({"calls": [bash("echo still runs")]}))
    ro = tmp_path / "ro"
    ro.mkdir()
    subprocess.run(["mount", "--bind", "-o", "ro", str(ws), str(ro)], check=False)
    try:
        if not (ro / "toolrun.yaml").exists():
            pytest.skip("cannot make a read-only bind mount here")
        done = subprocess.run(
            exec_argv(plan, ro, "--no-journal"),
            cwd=ro,
            capture_output=True,
            text=True,
            check=False,
        )
        assert json.loads(done.stdout)["output"] == "still runs\n", done.stdout
    finally:
        # toolrun's side process may still be leaving (its cwd is there): a plain umount
        # then fails as busy, and the mount left behind makes pytest's clean-up of old
        # temporary folders fail in a later session. A lazy one detaches it at once.
        subprocess.run(["umount", "--lazy", str(ro)], check=False)
