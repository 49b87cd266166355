"""A check of several inputs, one worker process each (`check A B --jobs 2`), stopped
midway: by Ctrl-C, SIGTERM or SIGKILL. It ends at once, its workers and the hooks they
run end with it, nothing is left in the process table."""

from __future__ import annotations

import contextlib
import json
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


def check_two(ws: Path) -> subprocess.Popen[str]:
    """``check a.json b.json --jobs 2`` in ``ws``, started as a shell would start it."""
    return subprocess.Popen(
        [sys.executable, "-m", "toolrun", "check", "a.json", "b.json", "--jobs", "2"],
        cwd=ws,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own
    )


def start(ws: Path) -> tuple[subprocess.Popen[str], list[int], list[int]]:
    """The check of two inputs with --jobs 2, once both workers' hooks run: the check,
    its child processes and the hooks' pids."""
    write(ws / "toolrun.yaml", HOOKED)
    for name in ("a.json", "b.json"):
        write(ws / name, '{"calls": [{"tool": "Bash", "input": {"command": "ls"}}]}')
    proc = check_two(ws)
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


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the workers, their reaper side processes, hooks)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        with contextlib.suppress(OSError):  # (gone meanwhile: nothing below it either)
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
            found += [int(c) for c in children]
            todo += [int(c) for c in children]
    return found


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "term"])
def test_a_check_stopped_while_its_workers_start_hook_after_hook_ends_with_them(
    tmp_path: Path, sig: signal.Signals, leftovers: list[int]
) -> None:
    # the stop as CI met it on 5bd43f7 (communicate() timed out): it can land while a
    # worker reads its side process's answer to a hook's start, and the answer is lost.
    # Which instant the signal hits is luck here; the tests below and
    # tests/reaper/test_run.py make the bad instants happen every time
    write(tmp_path / "toolrun.yaml", HOOKED.replace("; exec sleep 300", ""))
    turn = {"calls": [{"tool": "Bash", "input": {"command": "ls"}}] * 50}
    for name in ("a.json", "b.json"):
        write(tmp_path / name, json.dumps({"turns": [turn] * 8}))
    proc = check_two(tmp_path)
    pids = tmp_path / "hookpids"
    deadline = time.monotonic() + 120
    while not (pids.exists() and len(pids.read_text().split()) >= 20):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.005)
    below = descendants(proc.pid)
    leftovers += below
    os.kill(proc.pid, sig)
    proc.communicate(timeout=60)
    assert gone(below) == []


# A pool's worker (as ``worker_start`` makes it) whose work swallows the interrupt, as
# work does that an interrupt reached at a bad place (a cleanup that then waits for an
# answer already lost): its parent prints the worker's pid, then waits
WORKER = """\
import subprocess, sys
code = '''
import os, sys, time
from toolrun.commands.split_check import worker_start
worker_start(os.getppid())
open(sys.argv[1], "w").close()
while True:
    try:
        time.sleep(60)
    except KeyboardInterrupt:
        pass
'''
child = subprocess.Popen([sys.executable, "-c", code, sys.argv[1]])
print(child.pid, flush=True)
child.wait()
"""


@pytest.mark.parametrize(
    "sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV], ids=["kill", "term", "segv"]
)
def test_a_worker_ends_at_its_parent_s_end_whatever_its_work_does_with_the_interrupt(
    tmp_path: Path, sig: signal.Signals, leftovers: list[int]
) -> None:
    # before: the end of the parent raised KeyboardInterrupt in the worker, which left
    # the worker to whatever its code did with it; a worker that never came back to the
    # pool's loop ran on, holding the check's stdout and stderr open
    ready = tmp_path / "ready"
    with subprocess.Popen(
        [sys.executable, "-c", WORKER, str(ready)], stdout=subprocess.PIPE, text=True
    ) as parent:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        leftovers += [parent.pid, worker]
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.02)
        os.kill(parent.pid, sig)
        parent.wait(timeout=60)
    assert gone([worker]) == []


SIGNALLED_TWICE = """\
import os, signal, sys, time
from toolrun.commands import split_check
split_check.worker_start(os.getppid())
try:
    os.kill(os.getpid(), signal.SIGTERM)  # the group's SIGTERM
    time.sleep(30)
except KeyboardInterrupt:
    # unwinding, or the pool sending the interrupt back, when the parent's own comes
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.2)
    print("stopped once", flush=True)
if sys.argv[1] == "orphaned":  # its parent gone meanwhile: the next one ends it at once
    split_check._parent = -1
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)
    print("still here", flush=True)
"""


@pytest.mark.parametrize("after", ["parent", "orphaned"])
def test_a_worker_stopping_takes_a_second_sigterm_without_a_second_interrupt(after: str) -> None:
    """(check A B --jobs 2 under kill -TERM -PGID: its workers get the group's SIGTERM, then
    their parent's; the second, raised again, printed a traceback now and then)"""
    done = subprocess.run([sys.executable, "-c", SIGNALLED_TWICE, after],
                          check=False, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.stderr == ""
    assert done.stdout == "stopped once\n"
    assert done.returncode == (0 if after == "parent" else 1)
