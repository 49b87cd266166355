"""#27 items 10 and 11: a toolrun killed with SIGKILL leaves nothing lying around.

A Write killed mid-write leaves no ``.toolrun-*.tmp`` in the workspace (the file has no
name until it is whole); a crashed run is known by its process being gone, so ``runs
prune`` deletes it, with the ``.out.part`` files it left. Real processes, real SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.faults.support_a import toolrun, write_plan
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins import _temp
from toolrun.tools.builtins._files import Target, atomic_write

BIG = 120 * 1024 * 1024


def spawn(ws: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "toolrun", *args], cwd=ws,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def open_in(pid: int, folder: Path) -> str | None:
    """A file the process has open in ``folder`` (its /proc link), if any."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith(f"{folder}/"):
            return link
    return None


def kill_mid_write(ws: Path, process: subprocess.Popen[bytes], folder: Path) -> list[str]:
    """Stop the process while it has a file open in ``folder``, note what the folder
    holds then, and SIGKILL it."""
    deadline = time.monotonic() + 240
    while open_in(process.pid, folder) is None:
        assert process.poll() is None, "toolrun ended before it was caught writing"
        assert time.monotonic() < deadline
        time.sleep(0.001)
    os.kill(process.pid, signal.SIGSTOP)
    seen = sorted(os.listdir(folder))
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    return seen


def leftovers(ws: Path) -> list[str]:
    return sorted(str(p.relative_to(ws)) for p in ws.rglob(".toolrun-*"))


@pytest.mark.parametrize("tool", ["Write-new", "Write-over", "Edit", "ApplyPatch"])
def test_a_kill_9_during_a_write_leaves_no_temp_file(tmp_path: Path, tool: str) -> None:
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "keep.txt").write_text("old\n")
    if tool == "Write-new":
        call = {"tool": "Write", "input": {"file_path": "sub/new.txt", "content": "x" * BIG}}
    elif tool == "Write-over":
        call = {"tool": "Write", "input": {"file_path": "sub/keep.txt", "content": "x" * BIG}}
    elif tool == "Edit":
        call = {"tool": "Edit", "input": {"file_path": "sub/keep.txt", "old_string": "old", "new_string": "y" * BIG}}
    else:
        patch = "*** Begin Patch\n*** Add File: sub/new.txt\n+" + "z" * BIG + "\n*** End Patch\n"
        call = {"tool": "ApplyPatch", "input": {"patch": patch}}
    write_plan(tmp_path, [{"id": "w", **call}])
    process = spawn(tmp_path, "exec", "plan.json", "--mode", "acceptEdits", "--no-journal")
    seen = kill_mid_write(tmp_path, process, folder)
    assert not [name for name in seen if name.startswith(".toolrun-")], seen
    assert leftovers(tmp_path) == []
    # and the write is all or nothing
    assert (folder / "keep.txt").read_text() == "old\n" or (folder / "keep.txt").stat().st_size >= BIG
    assert not (folder / "new.txt").exists() or (folder / "new.txt").stat().st_size > BIG


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_a_temp_files_of_a_process_that_is_gone_are_swept_by_the_next_write(tmp_path: Path) -> None:
    # what a toolrun without O_TMPFILE (or killed between link and rename) leaves
    gone = dead_pid()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        names = {
            "dead": f".toolrun-{gone}-0123456789ab.tmp",
            "alive": f".toolrun-{sleeper.pid}-0123456789ab.tmp",
            "other": ".toolrun-0123456789ab.tmp",  # not of this pattern: not ours to judge
            "dir": f".toolrun-{gone}-ba9876543210.tmp",  # a folder, not a temp file
        }
        for key, name in names.items():
            (tmp_path / name).mkdir() if key == "dir" else (tmp_path / name).write_text("x")
        write_plan(tmp_path, [{"id": "w", "tool": "Write", "input": {"file_path": "a.txt", "content": "new"}}])
        done = toolrun(tmp_path, "exec", "plan.json", "--mode", "acceptEdits", "--no-journal")
        assert done.returncode == 0, done.stderr
        left = set(os.listdir(tmp_path))
        assert names["dead"] not in left
        assert {names["alive"], names["other"], names["dir"], "a.txt"} <= left
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_write_without_o_tmpfile_uses_a_named_file_and_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a file system without O_TMPFILE (the flag unknown here stands for it)
    monkeypatch.setattr(_temp, "_UNNAMED_FLAGS", os.O_WRONLY | os.O_CLOEXEC)
    ctx = ToolContext.for_workspace(tmp_path)
    target = Target.of(tmp_path / "a.txt", ctx)
    atomic_write(target, b"data")
    assert (tmp_path / "a.txt").read_bytes() == b"data" and leftovers(tmp_path) == []


def runs(ws: Path) -> list[str]:
    return sorted(p.stem for p in (ws / ".toolrun" / "runs").glob("*.jsonl"))


def wait_for(
    check: Callable[[], object], what: str, process: subprocess.Popen[bytes], limit: float = 120
) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert process.poll() is None, f"toolrun ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def allow_bash(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text("permissions:\n  allow: [Bash]\n")


@pytest.mark.parametrize(
    "moment",
    ["printing", "running", "before-any-call", "hook"],
)
def test_a_crashed_run_is_pruned_with_its_part_files(tmp_path: Path, moment: str) -> None:
    allow_bash(tmp_path)
    if moment == "printing":  # over the display: the whole output streams to a .out.part
        command = "yes 0123456789 | head -c 3000000; touch printed; sleep 60"
    elif moment == "running":
        command = "touch printed; sleep 60"
    elif moment == "hook":
        command = "echo ran"
        (tmp_path / "toolrun.yaml").write_text(
            "permissions:\n  allow: [Bash]\nhooks:\n  PreToolUse:\n    - matcher: Bash\n"
            "      hooks:\n        - {type: command, command: 'touch printed; sleep 60'}\n"
        )
    else:
        command = "echo never"
    calls = [{"id": "slow", "tool": "Bash", "input": {"command": command}}]
    if moment == "before-any-call":  # the second call never starts
        calls = [{"id": "first", "tool": "Bash", "input": {"command": "touch printed; sleep 60"}}, *calls]
    write_plan(tmp_path, calls)
    process = spawn(tmp_path, "exec", "plan.json")
    wait_for(lambda: (tmp_path / "printed").exists(), "the call ran", process)
    if moment == "printing":
        wait_for(lambda: list((tmp_path / ".toolrun" / "runs").glob("*/*.out.part")), "a .out.part", process)
    (run_id,) = runs(tmp_path)
    # while it runs: kept
    kept = toolrun(tmp_path, "runs", "prune", "--keep", "0")
    assert runs(tmp_path) == [run_id] and "still running" in kept.stderr
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    listed = toolrun(tmp_path, "runs")
    assert "crashed" in listed.stdout
    done = toolrun(tmp_path, "runs", "prune", "--keep", "0")
    assert done.returncode == 0 and f"deleted {run_id}" in done.stdout, done.stderr
    assert runs(tmp_path) == [] and not (tmp_path / ".toolrun" / "runs" / run_id).exists()
    assert list((tmp_path / ".toolrun" / "runs").iterdir()) == []


def test_a_crashed_run_goes_by_age_too(tmp_path: Path) -> None:
    allow_bash(tmp_path)
    write_plan(tmp_path, [{"id": "slow", "tool": "Bash", "input": {"command": "touch printed; sleep 60"}}])
    process = spawn(tmp_path, "exec", "plan.json")
    wait_for(lambda: (tmp_path / "printed").exists(), "the call ran", process)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    journal = next((tmp_path / ".toolrun" / "runs").glob("*.jsonl"))
    records = [json.loads(x) for x in journal.read_text().splitlines()]
    assert records[-1]["event"] == "started"  # no end record
    done = toolrun(tmp_path, "runs", "prune", "--older-than", "0")
    assert done.returncode == 0 and runs(tmp_path) == []
