"""A check of several inputs, one worker process each (`check A B --jobs 2`), stopped
midway: by Ctrl-C, SIGTERM or SIGKILL. It ends at once, its workers and the hooks they
run end with it, nothing is left in the process table."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.check.helpers import running, write

# each call's PreToolUse hook notes its pid and then waits: a worker is busy with its
# input for as long as the test wants
HOOKED = """\
hooks:
  PreToolUse:
    - matcher: "*"
      hooks:
        - type: command
          command: "echo $$ >> hookpids; exec sleep 300"
"""


def start(ws: Path) -> tuple[subprocess.Popen[str], list[int], list[int]]:
    """The check of two inputs with --jobs 2, once both workers' hooks run: the check,
    its child processes and the hooks' pids."""
    write(ws / "toolrun.yaml", HOOKED)
    for name in ("a.json", "b.json"):
        write(ws / name, '{"calls": [{"tool": "Bash", "input": {"command": "ls"}}]}')
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolrun", "check", "a.json", "b.json", "--jobs", "2"],
        cwd=ws,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own, as a shell would start it
    )
    pids = ws / "hookpids"
    deadline = time.monotonic() + 120
    while not (pids.exists() and len(pids.read_text().split()) == 2):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the hooks never ran: {proc.communicate()}")
        time.sleep(0.02)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    return proc, [int(c) for c in children], [int(p) for p in pids.read_text().split()]


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids to kill after the test, whatever it found (a failing run leaves them)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if running(pid):  # (what the test found gone is never signalled: its pid may be reused)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def gone(pids: list[int], within: float = 30.0) -> list[int]:
    """Of ``pids``, those still running after ``within`` seconds (a bound against a
    hang, not a measure of speed)."""
    deadline = time.monotonic() + within
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [p for p in pids if running(p)]


@pytest.mark.parametrize(
    ("sig", "group"),
    [(signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGTERM, True)],
    ids=["ctrl-c", "sigterm", "sigterm-group"],
)
def test_an_interrupted_check_of_several_inputs_ends_now_with_its_workers_and_hooks(
    tmp_path: Path, sig: signal.Signals, group: bool, leftovers: list[int]
) -> None:
    # before: the pool's shutdown waited for every worker to finish its input (here, a
    # hook of 300 s); Ctrl-C to the group gave each worker a KeyboardInterrupt of its own
    proc, children, hooks = start(tmp_path)
    leftovers += [proc.pid, *children, *hooks]
    if group:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err == "interrupted\n" and out == ""
    assert gone(children + hooks) == []


def test_a_killed_check_takes_its_workers_and_their_hooks_with_it(
    tmp_path: Path, leftovers: list[int]
) -> None:
    # SIGKILL: nothing runs in the check; each worker is told by the kernel, ends its
    # hook and exits (the pool's queue would never have told it)
    proc, children, hooks = start(tmp_path)
    leftovers += [*children, *hooks]
    proc.kill()
    proc.communicate(timeout=60)
    assert gone(children + hooks) == []
