"""One sandbox per run: every sandboxed call is started inside it by its reaper side process,
and the sandbox is made again only when what it binds changed (#25 point 5, #31)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from tests.sandbox.conftest import (
    SANDBOX_ON,
    bash,
    exec_plan,
    needs_bwrap,
    needs_curl,
    processes_with,
    wait_until,
    write,
)
from toolrun.config.loader import load_config
from toolrun.errors import ToolError
from toolrun.reaper import sandboxed
from toolrun.sandbox.policy import SandboxPolicy
from toolrun.sandbox.session import SandboxSession, session_for
from toolrun.tools.base import ToolContext, ToolOutput
from toolrun.tools.builtins.bash import BashInput, BashTool

pytestmark = [needs_bwrap, pytest.mark.anyio]

NAMESPACE = "readlink /proc/self/ns/pid"


def context(ws: Path, config: str = SANDBOX_ON) -> ToolContext:
    write(ws / "toolrun.yaml", config)
    policy = SandboxPolicy.of(load_config(workspace=ws))
    return ToolContext(workspace=ws, cwd=ws, sandbox=policy)


def session(ctx: ToolContext) -> SandboxSession:
    assert ctx.sandbox is not None
    found = ctx.sandbox.availability().bwrap
    assert found is not None
    return session_for(ctx.sandbox, found)


async def run(ctx: ToolContext, command: str, **extra: object) -> ToolOutput:
    return await BashTool().run(BashInput.model_validate({"command": command, **extra}), ctx)


def test_the_calls_of_a_run_share_one_sandbox_that_is_not_the_host(ws: Path) -> None:
    calls = [bash(NAMESPACE), bash(f"{NAMESPACE}; echo $$"), bash(f"cd /; {NAMESPACE}")]
    results, done = exec_plan(ws, SANDBOX_ON, calls)
    assert [r["status"] for r in results] == ["ok"] * 3, done.stderr
    spaces = {str(r["output"]).splitlines()[0] for r in results}
    assert len(spaces) == 1
    assert spaces != {os.readlink("/proc/self/ns/pid")}
    assert all(r["metadata"]["sandbox"]["sandboxed"] for r in results)
    # PID 1 of that namespace is the side process, not the call's shell
    assert str(results[1]["output"]).splitlines()[1] != "1"


async def test_two_calls_one_sandbox_in_process(ws: Path) -> None:
    ctx = context(ws)
    first, second = await run(ctx, NAMESPACE), await run(ctx, NAMESPACE)
    assert first.output == second.output != os.readlink("/proc/self/ns/pid") + "\n"
    assert session(ctx).builds == 1


async def test_a_new_masked_file_makes_a_new_sandbox_and_stays_masked(ws: Path) -> None:
    config = "permissions:\n  deny: ['Read(./.env)']\nsandbox:\n  enabled: true\n"
    ctx = context(ws, config)
    before = await run(ctx, NAMESPACE)
    # a sandboxed call makes the file the rules deny: from the next call on it is masked
    made = await run(ctx, "echo SECRET=1 > .env && echo made")
    assert made.output == "made\n"
    after = await run(ctx, f"cat .env; {NAMESPACE}")
    assert "SECRET" not in after.output
    assert "Permission denied" in after.output
    assert after.output.splitlines()[-1] != before.output.strip()
    assert session(ctx).builds == 2
    again = await run(ctx, NAMESPACE)  # nothing changed since: the same sandbox
    assert again.output.strip() == after.output.splitlines()[-1]
    assert session(ctx).builds == 2


@pytest.mark.parametrize("how", ["rename", "unlink-and-write", "hard-link", "directory"])
async def test_a_masked_path_replaced_outside_stays_masked(ws: Path, how: str) -> None:
    # The kernel detaches a bind whose mount point is unlinked in another namespace: the
    # path would show the new file. The sandbox notices and is made again.
    write(ws / ".env", "OLD=1\n")
    config = "permissions:\n  deny: ['Read(./.env)']\nsandbox:\n  enabled: true\n"
    ctx = context(ws, config)
    first = await run(ctx, "cat .env")
    assert "OLD" not in first.output and "Permission denied" in first.output
    target = ws / ".env"
    if how == "rename":
        write(ws / ".env.new", "NEW=1\n")
        os.replace(ws / ".env.new", target)
    elif how == "unlink-and-write":
        target.unlink()
        target.write_text("NEW=1\n")
    elif how == "hard-link":
        write(ws.parent / "real.env", "NEW=1\n")
        target.unlink()
        os.link(ws.parent / "real.env", target)
    else:
        target.unlink()
        write(target / "inner", "NEW=1\n")
    second = await run(ctx, "cat .env .env/inner 2>&1; echo end")
    assert "NEW" not in second.output, how
    assert session(ctx).builds == 2


async def test_a_call_running_in_the_old_sandbox_ends_there(
    ws: Path, no_leftovers: Callable[[str], list[int]]
) -> None:
    config = "permissions:\n  deny: ['Read(./.env)']\nsandbox:\n  enabled: true\n"
    ctx = context(ws, config)
    found: dict[str, ToolOutput] = {}

    async def slow() -> None:
        found["slow"] = await run(ctx, f"sleep 994.1 || true; {NAMESPACE}", timeout=5000)

    async with anyio.create_task_group() as tg:
        tg.start_soon(slow)
        assert await anyio.to_thread.run_sync(lambda: wait_until(lambda: bool(processes_with("994.1"))))
        write(ws / ".env", "SECRET=2\n")  # outside: the next call gets a new sandbox
        found["fast"] = await run(ctx, f"{NAMESPACE}; cat .env")
        assert "SECRET" not in found["fast"].output
        for pid in processes_with("sleep\x00994.1"):  # the sleep alone: the call goes on
            os.kill(pid, 9)
    slow_ns = found["slow"].output.splitlines()[0]
    assert slow_ns != found["fast"].output.splitlines()[0]
    assert session(ctx).builds == 2


async def test_what_a_call_leaves_running_is_killed_at_its_end(
    ws: Path, no_leftovers: Callable[[str], list[int]]
) -> None:
    ctx = context(ws)
    commands = [
        "sleep 995.11 >/dev/null 2>&1 & echo started",
        "setsid sleep 995.12 >/dev/null 2>&1 & echo started",
        "(nohup sleep 995.13 >/dev/null 2>&1 &); echo started",
        "sleep 995.14 & echo started",  # holds the output: killed after the grace period
    ]
    for command in commands:
        out = await run(ctx, command)
        assert out.output == "started\n"
        # gone by the time the call has returned: the host's process table says so
        assert not processes_with(command.split()[command.split().index("sleep") + 1])
    # while the sandbox itself (its side process) still runs, for the next call
    side = session(ctx).side
    assert side is not None and side.pid > 0
    os.kill(side.pid, 0)
    assert not no_leftovers("995.1")


async def test_a_timeout_kills_the_call_and_the_sandbox_serves_the_next(
    ws: Path, no_leftovers: Callable[[str], list[int]]
) -> None:
    from toolrun.errors import ToolTimeoutError

    ctx = context(ws)
    before = await run(ctx, NAMESPACE)
    with pytest.raises(ToolTimeoutError):
        await run(ctx, "setsid sleep 996.11 & sleep 996.12", timeout=300)
    assert not no_leftovers("996.1")
    after = await run(ctx, NAMESPACE)
    assert after.output == before.output


async def test_toolrun_environment_is_not_readable_from_inside(ws: Path) -> None:
    # PID 1 (the side process) has toolrun's environment; commands get their own only
    os.environ["SANDBOX_SESSION_TOKEN"] = "s3cr3t-env"
    try:
        config = SANDBOX_ON + "  credentials:\n    envVars: [{name: SANDBOX_SESSION_TOKEN, mode: deny}]\n"
        ctx = context(ws, config)
        out = await run(
            ctx,
            "cat /proc/1/environ; tr '\\0' '\\n' < /proc/1/environ; "
            "for p in /proc/[0-9]*; do cat $p/environ; done 2>/dev/null; "
            "echo token=${SANDBOX_SESSION_TOKEN:-unset}",
        )
    finally:
        del os.environ["SANDBOX_SESSION_TOKEN"]
    assert "s3cr3t-env" not in out.output
    assert "token=unset" in out.output
    assert "Permission denied" in out.output


async def test_the_launcher_refuses_a_command_outside_its_sandbox(ws: Path) -> None:
    ctx = context(ws)
    await run(ctx, "true")
    found = session(ctx)
    with pytest.raises(ToolError, match="outside its sandbox"):
        found.launch(["bash", "-c", "true"], ws, {})
    token = sandboxed.current.set(sandboxed.Inside(found.inside.side, "/elsewhere")
                                  if found.inside else None)
    try:
        with pytest.raises(ToolError, match="outside its sandbox"):
            found.launch(["bash", "-c", "true"], ws, {})
    finally:
        sandboxed.current.reset(token)


@needs_curl
def test_the_run_s_proxy_reports_each_call_s_refusals(ws: Path) -> None:
    config = SANDBOX_ON + "  network:\n    allowedDomains: [api.test]\n"
    calls = [
        bash("curl -sS https://evil.test/ >/dev/null 2>&1; echo one"),
        bash("echo two"),
        bash("curl -sS http://other.test/x >/dev/null 2>&1; echo three"),
        bash(f"{NAMESPACE}"),
        bash(f"{NAMESPACE}"),
    ]
    results, done = exec_plan(ws, config, calls)
    assert len(results) == 5, done.stderr
    one, two, three = (str(r["output"]) for r in results[:3])
    assert "[sandbox] connection blocked by the sandbox: evil.test is not in" in one
    assert "[sandbox]" not in two
    assert "other.test is not in" in three and "evil.test" not in three
    assert results[1]["metadata"]["sandbox"]["blocked"] == []
    assert results[3]["output"] == results[4]["output"]  # the bridge's sandbox lasts too


async def test_the_bridge_forwarder_is_no_leftover(ws: Path) -> None:
    # The side process is the forwarder's parent: it must not kill it as a leftover.
    config = SANDBOX_ON + "  network:\n    allowedDomains: [api.test]\n"
    ctx = context(ws, config)
    for _ in range(3):
        out = await run(ctx, "sleep 0.01 & echo x")
        assert out.output == "x\n"
    listed = await run(
        ctx,
        "python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', 3128)); "
        "s.sendall(b'GET http://evil.test/ HTTP/1.0\\r\\n\\r\\n'); print(s.recv(100))\"",
    )
    assert "403" in listed.output
    assert "[sandbox] connection blocked by the sandbox: evil.test" in listed.output



def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


async def test_a_sandbox_started_from_a_thread_that_ends_lives_on(ws: Path) -> None:
    # A parent-death signal comes when the starting *thread* ends: the sandbox must not
    # depend on the thread its first call ran in (another event loop, a worker thread).
    ctx = context(ws)
    got: list[ToolOutput] = []
    thread = threading.Thread(target=lambda: got.append(anyio.run(run, ctx, NAMESPACE)))
    thread.start()
    thread.join()  # (a thread of its own: anyio's worker threads stay for the next job)
    first = got[0]
    side = session(ctx).side
    assert side is not None and side.pid > 0
    wait_until(lambda: _zombie(side.pid), timeout=1.0)  # (what a signal would do)
    assert not _zombie(side.pid)
    second = await run(ctx, NAMESPACE)
    assert second.output == first.output
    assert session(ctx).builds == 1


async def test_a_jail_made_in_a_background_thread_lives_on(tmp_path: Path) -> None:
    # What the executor does: the read-only jail is made in a thread while the turn is
    # decided (toolrun.execution.jailing.JailKeeper.prestart), and that thread ends.
    from tests.sandbox.conftest import AVAILABLE
    from toolrun.reaper import jail as jails
    from toolrun.reaper.jail import Jail
    from toolrun.reaper.run import run_command
    from toolrun.sandbox.jail import JailPlan

    assert AVAILABLE.bwrap is not None
    jail = Jail(AVAILABLE.bwrap, JailPlan())
    try:
        thread = threading.Thread(target=jail.side.prestart)
        thread.start()
        thread.join()
        pid = jail.side.pid
        wait_until(lambda: _zombie(pid), timeout=1.0)
        assert not _zombie(pid)
        out: list[bytes] = []
        token = jails.current.set(jail)
        try:
            code = await run_command(["/bin/sh", "-c", NAMESPACE], cwd=tmp_path,
                                     env=dict(os.environ), time_limit=30, stdout=out.append)
        finally:
            jails.current.reset(token)
        assert code == 0
        assert b"".join(out).decode().strip() != os.readlink("/proc/self/ns/pid")
        assert jail.side.pid == pid  # the jail made in the thread ran it
    finally:
        jail.close()


@needs_curl
def test_a_call_that_kills_the_network_bridge_breaks_no_later_call(ws: Path) -> None:
    # The forwarder is a process of the shared sandbox: a command can kill it. The sandbox
    # then ends, and the next call gets a new one, bridge and all.
    config = SANDBOX_ON + "  network:\n    allowedDomains: [api.test]\n"
    calls = [
        bash(NAMESPACE),
        bash("for p in /proc/[0-9]*; do grep -q 'Seccomp:.0' $p/status 2>/dev/null && "
             "kill -9 ${p#/proc/}; done; sleep 1; echo survived"),
        bash(f"curl -sS http://evil.test/ 2>&1; {NAMESPACE}"),
        bash("curl -sS https://other.test/ 2>&1; echo"),
    ]
    results, done = exec_plan(ws, config, calls)
    assert len(results) == 4, done.stderr
    after = str(results[2]["output"])
    assert "connection blocked by the sandbox: evil.test is not in" in after
    assert str(results[0]["output"]).strip() not in after
    assert "connection blocked by the sandbox: other.test" in str(results[3]["output"])


async def test_a_rebuilt_jail_masks_on_every_side_process(tmp_path: Path) -> None:
    """Two commands at once run on the jail's two side processes, each in a bubblewrap of
    its own: both see the file before the jail is rebuilt to mask it, and neither after."""
    from tests.sandbox.conftest import AVAILABLE
    from toolrun.reaper import jail as jails
    from toolrun.reaper.jail import Jail
    from toolrun.reaper.run import run_command
    from toolrun.sandbox.jail import JailPlan

    assert AVAILABLE.bwrap is not None
    secret = tmp_path / "secret.txt"
    secret.write_text("sentinel-in-the-file\n")
    jail = Jail(AVAILABLE.bwrap, JailPlan())
    seen: list[str] = []

    async def one() -> None:
        out: list[bytes] = []
        await run_command(["/bin/sh", "-c", f"sleep 0.3; {NAMESPACE}; cat {secret}"],
                          cwd=tmp_path, env=dict(os.environ), time_limit=30,
                          stdout=out.append)  # fmt: skip
        seen.append(b"".join(out).decode())

    async def both() -> list[str]:
        seen.clear()
        token = jails.current.set(jail)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(one)
                tg.start_soon(one)
        finally:
            jails.current.reset(token)
        return list(seen)

    try:
        jail.prestart(overlap=True)
        before = await both()
        assert len({text.split()[0] for text in before}) == 2  # two PID namespaces
        assert all("sentinel-in-the-file" in text for text in before)
        assert jail.rebuild(JailPlan(unreadable_files=(str(secret),)))
        after = await both()
        assert len({text.split()[0] for text in after}) == 2
        assert not any("sentinel-in-the-file" in text for text in after), after
    finally:
        jail.close()
