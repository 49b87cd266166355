"""The reaper side process, through real toolrun processes, real shells and the process table."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.marked import Marked, processes

HOOKED_BASH = """\
permissions: {{allow: [Bash]}}
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{{type: command, command: '{hook}', timeout: 60}}]
"""


def toolrun_exec(ws: Path, plan: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "toolrun", "exec", str(plan), "--workspace", str(ws)]
        + ["--format", "jsonl"],
        cwd=ws,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def side_processes_of(pid: int) -> list[int]:
    """The reaper side processes started by ``pid`` (its children running side.py)."""
    return [
        child
        for child, ppid, _, cmdline in processes()
        if ppid == pid and b"reaper/side.py" in cmdline
    ]


def gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0]
        except FileNotFoundError:
            return True
        if state == b"Z":
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("where", ["bash", "hook"])
def test_sigkill_of_toolrun_kills_every_process_of_its_calls(tmp_path: Path, where: str) -> None:
    """Running commands, their children and what they detached all die with toolrun."""
    marked = Marked(tmp_path)
    s = marked.sleep
    # a setsid'ed grandchild (no parent-death signal reaches it), a plain background
    # child, a double fork, and the command itself still running in the foreground
    tree = f"setsid {s} 99 >/dev/null 2>&1 & {s} 98 >/dev/null 2>&1 & ( {s} 97 & ); {s} 96"
    plan = tmp_path / "plan.json"
    if where == "bash":
        (tmp_path / "toolrun.yaml").write_text("permissions: {allow: [Bash]}\n")
        plan.write_text(json.dumps({"calls": [{"tool": "Bash", "input": {"command": tree}}]}))
    else:
        (tmp_path / "hook.sh").write_text(tree + "\n")
        (tmp_path / "toolrun.yaml").write_text(HOOKED_BASH.format(hook=f"sh {tmp_path}/hook.sh"))
        plan.write_text(json.dumps({"calls": [{"tool": "Bash", "input": {"command": "true"}}]}))
    toolrun = toolrun_exec(tmp_path, plan)
    try:
        marked.wait_for(4)
        (side,) = side_processes_of(toolrun.pid)

        toolrun.kill()
        toolrun.wait()

        assert marked.survivors() == []
        assert gone(side), "the side process outlived its toolrun"
    finally:
        toolrun.kill()
        toolrun.communicate()
        marked.kill_all()


def test_sigkill_of_the_side_process_kills_the_running_commands(tmp_path: Path) -> None:
    """toolrun notices and kills the command's group; the next call gets a new side process."""
    marked = Marked(tmp_path)
    (tmp_path / "toolrun.yaml").write_text("permissions: {allow: [Bash]}\n")
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "calls": [
                    {"tool": "Bash", "input": {"command": f"exec {marked.sleep} 99"}},
                    {"tool": "Bash", "input": {"command": "echo again"}},
                ]
            }
        )
    )
    toolrun = toolrun_exec(tmp_path, plan)
    try:
        (command,) = marked.wait_for(1)
        (side,) = side_processes_of(toolrun.pid)

        os.kill(side, signal.SIGKILL)

        assert gone(command)
        stdout, _ = toolrun.communicate(timeout=30)
        killed, again = (json.loads(line) for line in stdout.splitlines())
        assert (killed["status"], again["status"], again["output"]) == ("error", "ok", "again\n")
    finally:
        toolrun.kill()
        toolrun.communicate()
        marked.kill_all()


def test_a_side_process_told_to_stop_takes_every_process_along(tmp_path: Path) -> None:
    marked = Marked(tmp_path)
    (tmp_path / "toolrun.yaml").write_text("permissions: {allow: [Bash]}\n")
    command = f"setsid {marked.sleep} 99 >/dev/null 2>&1 & {marked.sleep} 98"
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"calls": [{"tool": "Bash", "input": {"command": command}}]}))
    toolrun = toolrun_exec(tmp_path, plan)
    try:
        marked.wait_for(2)
        (side,) = side_processes_of(toolrun.pid)

        os.kill(side, signal.SIGTERM)

        assert marked.survivors() == []
        assert gone(side)
    finally:
        toolrun.kill()
        toolrun.communicate()
        marked.kill_all()


def test_descriptors_toolrun_inherited_never_reach_a_command(tmp_path: Path) -> None:
    """A descriptor left open (without close-on-exec) by whatever started toolrun, a CI
    runner say, must not be handed on to the commands through the side process."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "toolrun.yaml").write_text("permissions: {defaultMode: bypassPermissions}\n")
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps({"calls": [{"tool": "Bash", "input": {"command": "ls /proc/self/fd"}}]})
    )
    secret = (tmp_path / "secret").open("w")
    leaked = secret.fileno()
    os.set_inheritable(leaked, True)
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "toolrun",
                "exec",
                str(plan),
                "--format",
                "jsonl",
                "--no-journal",
            ],
            cwd=ws,
            pass_fds=(leaked,),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        secret.close()
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)["output"].split()
    assert str(leaked) not in seen
    assert set(seen) <= {"0", "1", "2", "3"}
