"""Processes a test can find in the real process table: ``sleep`` run under a unique name.

``Marked(folder)`` links ``sleep`` to a path holding a fresh marker; every process started
through that path carries the marker in ``/proc/PID/cmdline`` until it exits, whatever
session, group or parent it ends up in.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path


def processes() -> Iterator[tuple[int, int, bytes, bytes]]:
    """``(pid, ppid, state, cmdline)`` of every process still there when read."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: parse after the last ')'
        state, ppid = stat.rpartition(b")")[2].split()[:2]
        yield int(name), int(ppid), state, cmdline


DAEMON = """\
import os, sys
if os.fork():
    sys.exit(0)
os.setsid()
if os.fork():
    os._exit(0)
os.closerange(0, 1024)  # a daemon keeps nothing of its caller, the output pipe included
os.execv(sys.argv[1], [sys.argv[1], "99"])
"""


class Marked:
    def __init__(self, folder: Path) -> None:
        self.marker = f"toolrun-marked-{uuid.uuid4().hex[:12]}"
        self.path = folder / self.marker
        sleep = shutil.which("sleep")
        assert sleep is not None
        os.symlink(sleep, self.path)
        self._daemon = self.path.with_name(f"{self.marker}-daemon.py")
        self._daemon.write_text(DAEMON)

    @property
    def sleep(self) -> str:
        """The command word for the shell: ``{marked.sleep} 99`` sleeps 99 s, marked."""
        return shlex.quote(str(self.path))

    def running(self) -> list[int]:
        """Living (not zombie) processes started through the marked path."""
        needle = str(self.path).encode()
        return [
            pid
            for pid, _, state, cmdline in processes()
            if cmdline.startswith(needle) and state != b"Z"
        ]

    @property
    def daemon(self) -> str:
        """A command that starts the marked sleep as a classic daemon and returns at once."""
        return f"{shlex.quote(sys.executable)} {shlex.quote(str(self._daemon))} {self.sleep}"

    @property
    def pgrep(self) -> str:
        """A shell test that is true while a marked process runs (the shell itself is not)."""
        return f"pgrep -f {shlex.quote('^' + str(self.path))} >/dev/null"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[int]:
        """Poll until ``count`` marked processes run (bounded); return them."""
        deadline = time.monotonic() + timeout
        while len(pids := self.running()) < count:
            assert time.monotonic() < deadline, f"only {pids} of {count} marked processes started"
            time.sleep(0.01)
        return pids

    def survivors(self, timeout: float = 10.0) -> list[int]:
        """Poll until no marked process runs (bounded); return those still running."""
        deadline = time.monotonic() + timeout
        while (pids := self.running()) and time.monotonic() < deadline:
            time.sleep(0.01)
        return pids

    def kill_all(self) -> None:
        for pid in self.running():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
