"""Stopping a command run to its end (``toolrun.reaper.run``): never an unbounded wait.

An interrupt raised where the program is (``check`` turns Ctrl-C and SIGTERM into
KeyboardInterrupt) can land between a read of the side process's answers and their use:
those answers are lost. The stop that follows must still end, and the command with it.
"""

from __future__ import annotations

import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.marked import Marked

# The first answers the side process sends are read and dropped (misaligned: the first
# bytes of the first answer once the stop has begun), as an interrupt landing in the
# middle of ``receive`` would drop them; the call is stopped once the test says "go" (or
# by its time limit). (Not the first answer after "go": on a loaded machine that can be
# the command's start, heard late, and a stream that loses its place before any stop
# takes its commands down with an error, as it should.)
# "returned" when run_command has come back.
SCRIPT = """\
import os, socket, sys
import anyio
from toolrun.reaper import link
from toolrun.reaper.run import run_command

sleep, how, go = sys.argv[1:4]
real = link._Side.receive
dropped, stopping = [], []

def drop(control, size):  # (a wake-up with nothing to read drops nothing)
    try:
        dropped.append(control.recv(size, socket.MSG_DONTWAIT))
    except BlockingIOError:
        pass

def receive(self):
    if how == "misaligned":  # the first bytes of the first answer once stopping, the rest read
        if not dropped and stopping:
            drop(self.control, 2)
    elif not dropped:
        drop(self.control, 65536)
        return
    real(self)

link._Side.receive = receive

async def main():
    kept = []
    options = {"stdin": b"", "stderr": kept.append} if how == "piped" else {}
    limit = 2.0 if how == "timed-out" else 120.0
    async with anyio.create_task_group() as tg:
        async def stop_on_go():
            while not os.path.exists(go):
                await anyio.sleep(0.02)
            stopping.append(True)
            tg.cancel_scope.cancel()
        if how != "timed-out":
            tg.start_soon(stop_on_go)
        await run_command([sleep, "99"], cwd=".", env={}, time_limit=limit,
                          stdout=kept.append, **options)
        tg.cancel_scope.cancel()

anyio.run(main)
print("returned", flush=True)
anyio.run(anyio.sleep, 30)  # the side process lives on: a leftover would show
"""


def _line(proc: subprocess.Popen[str], within: float) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], within)
    return proc.stdout.readline() if ready else ""


@pytest.mark.parametrize("how", ["captured", "piped", "timed-out", "misaligned"])
def test_a_command_whose_start_was_never_heard_of_is_still_stopped(
    tmp_path: Path, how: str
) -> None:
    # before: the stop waited, shielded and without a bound, for the command's pid; and
    # an answer cut short (misaligned) left every later one unreadable, a traceback on
    # stderr at each, until the stop gave up
    marked = Marked(tmp_path)
    go = tmp_path / "go"
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(marked.path), how, str(go)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        marked.wait_for(1)
        go.touch()
        started = time.monotonic()
        said = _line(proc, 30)
        took = time.monotonic() - started
        survivors = marked.survivors()
        alive = proc.poll() is None
    finally:
        proc.kill()
        _, err = proc.communicate()
        marked.kill_all()
    assert said == "returned\n", err
    assert took < 30
    assert survivors == []
    assert alive  # (the side process is still there: it killed the sleep)
    assert "Traceback" not in err


# A signal whose handler raises (as check's does) comes right after the first read of the
# side process's answers, before they are handed on: which answers reached their command,
# once the interrupt is out.
SIGNALLED = """\
import os, signal, sys
import anyio
from toolrun.reaper import raise_now
from toolrun.reaper import link
from toolrun.reaper.run import run_command

sleep = sys.argv[1]
taken = []
real_take, real_init = link.Command._take, link._Side.__init__

def take(self, answer):
    taken.append(answer.split(b" ")[0].decode())
    real_take(self, answer)

class Control:
    def __init__(self, sock):
        self.sock, self.fired = sock, False
    def recv(self, size, flags=0):
        data = self.sock.recv(size, flags)
        if data and not self.fired:
            self.fired = True
            os.kill(os.getpid(), signal.SIGUSR1)  # (handled at the next line of Python)
        return data
    def __getattr__(self, name):
        return getattr(self.sock, name)

def init(self, *args, **kwargs):
    real_init(self, *args, **kwargs)
    self.control = Control(self.control)

link.Command._take, link._Side.__init__ = take, init
signal.signal(signal.SIGUSR1, lambda *_: raise_now(KeyboardInterrupt()))
try:
    anyio.run(lambda: run_command([sleep, "99"], cwd=".", env={}, time_limit=120,
                                  stdout=lambda chunk: None))
except KeyboardInterrupt:
    print("interrupted", *taken, flush=True)
anyio.run(anyio.sleep, 30)  # the side process lives on: a leftover would show
"""


def test_an_interrupt_while_answers_are_read_waits_until_they_are_kept(tmp_path: Path) -> None:
    # before: raised between the read and the keeping, it lost the command's start; the
    # stop then waited its grace for a pid that never came and left the kill to close()
    marked = Marked(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-c", SIGNALLED, str(marked.path)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        said = _line(proc, 60)
        assert said.split()[:2] == ["interrupted", "pid"], proc.stderr
        assert marked.survivors() == []
    finally:
        proc.kill()
        _, err = proc.communicate()
        marked.kill_all()
    assert "Traceback" not in err
