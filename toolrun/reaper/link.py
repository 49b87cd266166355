"""toolrun's end of the reaper side process: start a command there, wait for it, sweep after it.

The side process is started on first use (or by :func:`prestart`) and serves the whole
toolrun process (any thread, any event loop). If it has died, the next request starts a
new one. See :mod:`toolrun.reaper.side` for the protocol.
"""

from __future__ import annotations

import array
import contextlib
import marshal
import os
import signal
import socket
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio

from toolrun.reaper.side import ENV_SLOTS, HEADER

#: How long a sweep of leftovers may take before the call lets go anyway.
SWEEP_WAIT_S = 5.0


class _SideProcess:
    """The control socket to the side process, started when first needed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._control: socket.socket | None = None
        self._pid = 0
        self._devnull = -1
        # Environments the side process holds, by content: a call sends its slot number
        # rather than the whole table again (see ``side.Reaper.environment``).
        self._envs: dict[tuple[tuple[str, str], ...], int] = {}
        self._next_slot = 0

    def devnull(self) -> int:
        with self._lock:
            if self._devnull < 0:
                self._devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            return self._devnull

    def send(
        self, fds: Sequence[int], argv: list[str], cwd: str, env: Mapping[str, str], targets: list[int]
    ) -> None:
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
        key = tuple(env.items())
        with self._lock:
            for attempt in (1, 2):
                control = self._control if self._control is not None else self._start()
                ref = self._env_ref(key)
                payload = marshal.dumps((argv, cwd, ref, targets))
                header = len(payload).to_bytes(HEADER, "big")
                try:
                    # MSG_NOSIGNAL: a dead side process must not SIGPIPE toolrun
                    sent = control.sendmsg([header, payload], rights, socket.MSG_NOSIGNAL)
                    if sent < len(header) + len(payload):  # a payload larger than the buffer
                        rest = (header + payload)[sent:]
                        control.sendall(rest, socket.MSG_NOSIGNAL)
                    return
                except (BrokenPipeError, ConnectionResetError):
                    self._lost()
                    if attempt == 2:
                        raise
                except BaseException:
                    if isinstance(ref, tuple):  # it never got there: do not count on it
                        self._envs.pop(key, None)
                    raise

    def _env_ref(self, key: tuple[tuple[str, str], ...]) -> int | tuple[int, dict[str, str]]:
        """The slot of an environment the side process holds, or the slot and the table
        for it to hold from now on (the oldest is given up, in the same order there)."""
        slot = self._envs.get(key)
        if slot is not None:
            return slot
        slot = self._next_slot
        self._next_slot = (slot + 1) % ENV_SLOTS
        for old, held in list(self._envs.items()):
            if held == slot:
                del self._envs[old]
        self._envs[key] = slot
        return slot, dict(key)

    def prestart(self) -> None:
        with self._lock:
            if self._control is None:
                self._start()

    def _start(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            theirs.set_inheritable(True)
            script = str(Path(__file__).with_name("side.py"))
            python = sys.executable or "python3"
            self._pid = os.posix_spawn(
                python,
                [python, "-I", "-S", script, str(theirs.fileno())],
                os.environ,
                # not even stderr: whoever reads toolrun's output must see it end with toolrun
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)
                ],
                setsid=True,  # a signal to toolrun's process group must not reach it
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._control = ours
        self._envs.clear()  # a new side process holds none
        self._next_slot = 0
        return ours

    def _lost(self) -> None:
        """The side process is gone: forget it (and reap it) so the next use starts one."""
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._pid:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._pid, os.WNOHANG)
            self._pid = 0


_side = _SideProcess()


def side_pid() -> int:
    """The side process's pid (0 when none runs): a forced exit must leave it to sweep
    what runs under it, since killing it first would orphan exactly those processes."""
    return _side._pid


def prestart() -> None:
    """Start the side process now (without waiting for it), so that it is ready by the
    first command: its own start-up (about 20 ms) then overlaps with toolrun's."""
    _side.prestart()


class Command:
    """A command handed to the side process; its messages are read as they are needed."""

    def __init__(self, sock: socket.socket, program: str) -> None:
        self._sock = sock
        self._program = program
        self.pid = 0
        #: As in :mod:`subprocess`: the exit code, or ``-N`` when killed by signal N.
        self.returncode: int | None = None
        #: Why it could not start (then ``returncode`` is 127).
        self.error: OSError | None = None
        self._leftovers = False

    async def _receive(self) -> bytes:
        """The next message from the side process; ``b""`` once it has gone."""
        while True:
            try:
                return self._sock.recv(4096)
            except BlockingIOError:
                await anyio.wait_readable(self._sock)
            except OSError:
                return b""

    async def _next(self) -> None:
        self._take(await self._receive())

    def fileno(self) -> int:
        """The call socket, for a caller that watches it itself and then calls :meth:`pump`."""
        return self._sock.fileno()

    def pump(self) -> None:
        """Take in every message already there, without waiting."""
        while self._sock.fileno() >= 0:
            try:
                message = self._sock.recv(4096)
            except BlockingIOError:
                return
            except OSError:
                message = b""
            self._take(message)
            if not message:
                return

    def _take(self, message: bytes) -> None:
        if message.startswith(b"pid "):
            self.pid = int(message[4:])
        elif message.startswith(b"exit "):
            status, _, tail = message[5:].partition(b" ")
            self._leftovers = tail == b"leftovers"
            self.returncode = os.waitstatus_to_exitcode(int(status))
        elif message.startswith(b"error "):
            errno, _, text = message[6:].decode(errors="replace").partition(" ")
            self.error, self.returncode = OSError(int(errno), text), 127
            self.close()  # nothing more will come
        elif self.returncode is None:  # the side process died: take the command down
            self.signal_group(signal.SIGKILL)
            if not self.pid:
                self.error = OSError(f"the reaper side process ended before {self._program!r}")
            self.returncode = -signal.SIGKILL

    async def started(self) -> int:
        """The pid, once the command runs; raises :class:`OSError` if it could not start."""
        while not self.pid and self.returncode is None:
            await self._next()
        if self.error is not None:
            raise self.error
        return self.pid

    async def wait(self) -> int:
        """The return code once it has exited (127 if it could not start: see ``error``)."""
        while self.returncode is None:
            await self._next()
        return self.returncode

    def signal_group(self, sig: signal.Signals) -> None:
        """Signal the command's process group (its session: it is the leader)."""
        if self.pid > 0:  # never killpg(0): that is our own group
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)

    async def finish(self) -> None:
        """Kill whatever the command left running, then let go of it.

        Call after :meth:`wait`; on a command still running, this kills its whole tree.
        """
        if self._leftovers and self._sock.fileno() >= 0:
            with contextlib.suppress(OSError):
                self._sock.send(b"done", socket.MSG_NOSIGNAL)
                with anyio.move_on_after(SWEEP_WAIT_S):
                    await self._receive()
        self.close()

    def close(self) -> None:
        """Let go; a command still running is killed with everything under it."""
        self._sock.close()


def launch(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    stdin: int | None = None,
    stdout: int | None = None,
    stderr: int | None = None,
    pass_fds: Mapping[int, int] | None = None,
) -> Command:
    """Hand ``argv`` to the side process, to run in a new session; do not wait for it.

    ``stdin``/``stdout``/``stderr`` are descriptors for the child (``None``: /dev/null);
    ``pass_fds`` maps more of ours to the numbers the child sees them as. The caller keeps
    (and closes) its descriptors. Whether it started shows in :meth:`Command.started`
    (or in ``error`` after :meth:`Command.wait`): not waiting for that here saves a
    round trip per call.
    """
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    extra = dict(pass_fds or {})
    null = _side.devnull()
    fds = [theirs.fileno(), *(fd if fd is not None else null for fd in (stdin, stdout, stderr))]
    # absolute: the side process has a working directory of its own
    where = os.path.abspath(cwd)
    try:
        _side.send([*fds, *extra], list(argv), where, env, list(extra.values()))
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    ours.setblocking(False)
    return Command(ours, argv[0])
