"""toolrun's end of the reaper side process: start a command there, wait for it, sweep after it.

The side process is started on first use (or by :func:`prestart`) and serves the whole
toolrun process (any thread, any asyncio event loop). Every request and every answer goes
over its one control socket: a call costs one message there and usually two back, and
no socket of its own. Each event loop that waits on a command reads the answers as they
come (one registration per loop, not per call) and hands each to its command. If the side
process has died, the commands it ran are killed and the next request starts a new one.
See :mod:`toolrun.reaper.side` for the protocol.

Kept in one module: one control socket and its state (requests in flight, the
readers per event loop, the restart after the side process died) make one protocol
state machine, read together.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import itertools
import marshal
import os
import signal
import socket
import sys
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolrun.reaper.side import ENV_SLOTS, HEADER

#: How long a sweep of leftovers may take before the call lets go anyway.
SWEEP_WAIT_S = 5.0
#: The most read from the control socket at once (a larger recv buffer is an mmap and
#: munmap each time: 8 times the cost of the read itself here).
RECEIVE_BYTES = 65536

#: Where a command's output goes, chunk by chunk.
Sink = Callable[[bytes], None]

_EnvKey = tuple[tuple[str, str], ...]

#: The main thread, where signal handlers run.
_MAIN = threading.main_thread().ident
#: Whether the main thread is reading the side process's answers (read, not yet kept),
#: and the interrupt a signal handler raised meanwhile (see :func:`raise_interrupt`).
_reading_answers = False
_deferred: list[BaseException] = []


def raise_interrupt(exc: BaseException) -> None:
    """For a signal handler that raises (``check`` turns Ctrl-C and SIGTERM into
    KeyboardInterrupt where the program is): raise ``exc`` now, or, while the main thread
    reads the side process's answers, once they are kept. Raised between the read and
    the keeping, it would lose them: a command's start (its pid, which the stop that
    follows waits for), or the first bytes of an answer, after which nothing reads."""
    if _reading_answers:
        _deferred.append(exc)
        return
    raise exc


#: Turns the side process's own argv into the argv that starts it (``bwrap ... --``
#: for a jail), with the descriptors that must reach the wrapper (closed here after).
Wrap = Callable[[list[str]], tuple[list[str], list[int]]]
#: A descriptor for the wrapper's own stderr (closed here after the start), so that its
#: owner can read why a wrapper that ended at once did (bubblewrap's "bwrap: ..." line).
Errors = Callable[[], int]


class _Side:
    """One side process: its control socket, and the commands it runs for us."""

    def __init__(self, owner: _SideProcess, wrap: Wrap | None = None) -> None:
        self.owner = owner
        #: Inside a PID namespace of its own: its pids are not ours to signal.
        self.jailed = wrap is not None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        passed: list[int] = []
        try:
            theirs.set_inheritable(True)
            python = sys.executable or "python3"
            argv = [python, "-I", "-S", *_side_script(), str(theirs.fileno())]
            if wrap is not None:
                argv, passed = wrap(argv)
                for fd in passed:
                    os.set_inheritable(fd, True)
            actions: list[tuple[Any, ...]] = [
                (os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)
            ]
            if owner.errors is not None:
                errors = owner.errors()
                passed.append(errors)
                actions[2] = (os.POSIX_SPAWN_DUP2, errors, 2)
            self.pid = os.posix_spawn(
                argv[0],
                argv,
                os.environ,
                # not even stderr: whoever reads toolrun's output must see it end with toolrun
                file_actions=actions,
                setsid=True,  # a signal to toolrun's process group must not reach it
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
            for fd in passed:
                os.close(fd)
        self.control = ours
        self.fd = ours.fileno()
        self.gone = False
        self.calls: dict[int, Command] = {}
        self._ids = itertools.count(1)
        self._received = b""  # the start of an answer not yet complete
        self._watchers = 0  # once gone: the loops yet to let go of the socket, and us
        self._reading = threading.Lock()
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, None] = (
            weakref.WeakKeyDictionary()
        )
        # Environments the side process holds, by content: a call sends its slot number
        # rather than the whole table again (see ``side.Reaper.environment``).
        self._envs: dict[_EnvKey, int] = {}
        self._next_slot = 0
        # The last environment sent, its names in order and its slot: most calls send the
        # same one again, told by a comparison of the two tables in C, without the key
        # (a tuple of every pair, hashed: a tenth of this module's time per call).
        self._last_env: tuple[dict[str, str], list[str], int] | None = None

    def send(self, message: tuple[Any, ...], fds: Sequence[int] = ()) -> None:
        """One request; the caller holds the sending lock."""
        payload = marshal.dumps(message)
        header = len(payload).to_bytes(HEADER, "big")
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        # MSG_NOSIGNAL: a dead side process must not SIGPIPE toolrun
        sent = self.control.sendmsg([header, payload], rights, socket.MSG_NOSIGNAL)
        if sent < len(header) + len(payload):  # a payload larger than the buffer
            self.control.sendall((header + payload)[sent:], socket.MSG_NOSIGNAL)

    def run(
        self,
        argv: list[str],
        cwd: str,
        env: Mapping[str, str],
        fds: Sequence[int],
        targets: list[int],
        given: int = 3,
        capture: Sink | None = None,
    ) -> Command:
        """Start ``argv``: ``fds`` are the first ``given`` of stdin, stdout and stderr
        (fewer than 3 with ``capture``), then the extra ones, numbered ``targets``."""
        last = self._last_env
        names = list(env)
        key: _EnvKey | None = None
        if last is not None and names == last[1] and env == last[0]:
            ref: int | tuple[int, dict[str, str]] = last[2]  # the usual: as the call before
        else:
            key = tuple(env.items())
            ref = self._env_ref(key)
        command = Command(self, next(self._ids), argv[0], capture)
        self.calls[command.id] = command
        try:
            self.send(("run", command.id, argv, cwd, ref, targets, given), fds)
        except BaseException:
            del self.calls[command.id]
            if key is not None and isinstance(ref, tuple):  # it never got there
                self._envs.pop(key, None)
                self._last_env = None
            raise
        if key is not None:
            self._last_env = (dict(env), names, ref[0] if isinstance(ref, tuple) else ref)
        return command

    def _env_ref(self, key: _EnvKey) -> int | tuple[int, dict[str, str]]:
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

    def listen(self, loop: asyncio.AbstractEventLoop) -> None:
        """Have ``loop`` read the answers as they come (once per loop)."""
        if loop not in self._loops and not self.gone:
            loop.add_reader(self.fd, self.receive)
            self._loops[loop] = None

    def receive(self) -> None:
        """Hand every answer already here to its command; notice when the side is gone.
        An interrupt that comes meanwhile is raised once they are handed on."""
        global _reading_answers
        if threading.get_ident() != _MAIN:
            self._receive()
            return
        if _deferred:  # a second interrupt landed after the flag fell: raised already
            _deferred.clear()
        _reading_answers = True
        try:
            self._receive()
        finally:
            _reading_answers = False  # (before the look: one raised now is not deferred)
            if _deferred:
                exc = _deferred.pop()
                _deferred.clear()
                raise exc

    def _receive(self) -> None:
        with self._reading:
            if self.gone:
                return
            chunks = [self._received]
            ended = False
            while True:
                try:
                    chunk = self.control.recv(RECEIVE_BYTES, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                except OSError:
                    chunk = b""
                if not chunk:
                    ended = True
                    break
                chunks.append(chunk)
                if len(chunk) < RECEIVE_BYTES:
                    break  # all there was (more wakes the loop again): spares a recv
            data = b"".join(chunks)
            calls = self.calls
            at, end = 0, len(data)
            try:
                while (newline := data.find(b"\n", at)) >= 0:
                    number, _, answer = data[at:newline].partition(b" ")
                    if answer.startswith(b"out "):  # N out LEN, then LEN bytes of output
                        stop = newline + 1 + int(answer[4:])
                        if stop > end:
                            break  # the rest of it is on its way
                        command = calls.get(int(number))
                        if command is not None:
                            command._output(data[newline + 1 : stop])
                        at = stop
                        continue
                    at = newline + 1
                    command = calls.get(int(number))
                    if command is not None:
                        command._take(answer)
            except ValueError:
                # not an answer: the stream lost its place (bytes read, then dropped by an
                # interrupt that landed before they were kept). Nothing after it can be
                # trusted: as when the side ends, its commands are taken down
                ended = True
            self._received = data[at:]
        if ended:
            self.lost()

    def lost(self) -> None:
        """The side process is gone: take its running commands down and let go of it."""
        with self._reading:
            if self.gone:
                return
            self.gone = True
            try:
                running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            # The socket is closed only once no loop watches it any more: a loop still
            # registered for its number would never see a pipe that got the number next.
            self._watchers = 1
            for loop in list(self._loops):
                if loop is running:
                    loop.remove_reader(self.fd)
                    continue
                try:  # another thread's loop: it lets go when it next runs
                    loop.call_soon_threadsafe(self._let_go, loop)
                    self._watchers += 1
                except RuntimeError:  # closed, and its selector with it
                    pass
            self._loops.clear()
        for command in list(self.calls.values()):
            command._take(b"")
        self.calls.clear()
        self._let_go(None)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, os.WNOHANG)

    def _let_go(self, loop: asyncio.AbstractEventLoop | None) -> None:
        if loop is not None:
            loop.remove_reader(self.fd)
        with self._reading:
            self._watchers -= 1
            last = self._watchers == 0
        if last:
            self.control.close()


#: Runs side.py from its bytecode: ``-c LOADER side.py CACHED FD ...``, seen by side.py as
#: ``side.py FD ...`` (bytecode that will not load: compiled from the source after all).
_LOADER = """\
import marshal, sys
script, cached = sys.argv[1:3]
sys.argv[:3] = [script]
try:
    with open(cached, "rb") as f:
        code = marshal.loads(f.read()[16:])
except Exception:
    with open(script, "rb") as f:
        code = compile(f.read(), script, "exec")
exec(code, {"__name__": "__main__", "__file__": script})
"""


def _side_script(script: str = str(Path(__file__).with_name("side.py"))) -> list[str]:
    """How the side process's argv names its program: side.py's bytecode through
    :data:`_LOADER` when the cache beside it is that of the source as it is now (as the
    import system checks it), else side.py itself. A script is compiled at every start,
    never read from a cache: 3 ms here, 20 on a busy machine, ahead of the first call."""
    import importlib.util

    try:
        cached = importlib.util.cache_from_source(script)
        source = os.stat(script)
        with open(cached, "rb") as f:
            header = f.read(16)
    except (OSError, NotImplementedError, ValueError):
        return [script]
    current = (
        importlib.util.MAGIC_NUMBER
        + bytes(4)  # flags 0: checked by time and size, not by hash
        + (int(source.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
        + (source.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    )
    return ["-c", _LOADER, script, cached] if header == current else [script]


class _SideProcess:
    """The current side process, started when first needed and again after it died."""

    def __init__(self, wrap: Wrap | None = None, errors: Errors | None = None) -> None:
        self._lock = threading.Lock()  # for sending: one request at a time
        self._side: _Side | None = None
        self._devnull = -1
        self._wrap = wrap
        self.errors = errors
        self._retired: list[_Side] = []  # replaced, let go of once their calls have ended

    def rewrap(self, wrap: Wrap) -> None:
        """Start the next side process with ``wrap`` (a jail rebuilt): the current one
        serves its running calls to their end and is let go of after."""
        with self._lock:
            self._wrap = wrap
            if self._side is not None and not self._side.gone:
                self._retired.append(self._side)
            self._side = None
            self._let_go_idle()

    def _let_go_idle(self) -> None:
        for side in [s for s in self._retired if not s.calls or s.gone]:
            self._retired.remove(side)
            with contextlib.suppress(OSError):  # it sees the end, kills what is left, exits
                side.control.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        """Let go of every side process of this one (a jail's, at the end of its run):
        each sees the end of its socket, kills what is left and exits."""
        with self._lock:
            sides = [*self._retired, *([self._side] if self._side is not None else [])]
            self._retired, self._side = [], None
        for side in sides:
            with contextlib.suppress(OSError):
                side.control.shutdown(socket.SHUT_RDWR)
            side.control.close()

    @property
    def pid(self) -> int:
        side = self._side
        return side.pid if side is not None and not side.gone else 0

    def ended(self) -> bool:
        """Whether the current side process was started and has ended (died, or could
        not be made: a bubblewrap that ends at once); the next command starts another."""
        side = self._side
        return side is not None and side.gone

    def running(self) -> int:
        """How many commands the current side process has that have not ended yet."""
        side = self._side
        return len(side.calls) if side is not None and not side.gone else 0

    def devnull(self) -> int:
        with self._lock:
            if self._devnull < 0:
                self._devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            return self._devnull

    def _current(self) -> _Side:
        if self._retired:
            self._let_go_idle()
        if self._side is None or self._side.gone:
            self._side = _Side(self, self._wrap)
        return self._side

    def prestart(self) -> None:
        with self._lock:
            self._current()

    def run(self, start: Callable[[_Side], Command]) -> Command:
        """``start`` a command on the current side process (a new one if it has died)."""
        with self._lock:
            for attempt in (1, 2):
                side = self._current()
                try:
                    return start(side)
                except OSError as exc:
                    # a side process that has died (or been let go of from another thread)
                    if not (side.gone or isinstance(exc, BrokenPipeError | ConnectionResetError)):
                        raise
                    side.lost()
                    if attempt == 2:
                        raise
        raise AssertionError("unreachable")

    def tell(self, side: _Side, message: tuple[Any, ...]) -> None:
        """A request about a call already running (its side process may be gone)."""
        with self._lock:
            if side.gone:
                return
            try:
                side.send(message)
            except OSError:
                pass  # it is gone: the next receive or request finds out


_side = _SideProcess()


def side_process(wrap: Wrap, errors: Errors | None = None) -> _SideProcess:
    """A side process of its own, started (on first use) as ``wrap`` says: inside a jail
    or the user's sandbox; ``errors`` gives the wrapper's stderr each time it starts."""
    return _SideProcess(wrap, errors)


def side_pid() -> int:
    """The side process's pid (0 when none runs): a forced exit must leave it to sweep
    what runs under it, since killing it first would orphan exactly those processes."""
    return _side.pid


def prestart() -> None:
    """Start the side process now (without waiting for it), so that it is ready by the
    first command: its own start-up (about 20 ms) then overlaps with toolrun's. One that
    cannot start now (no process may be made: ulimit -u) is left to the first command,
    whose result then says why."""
    with contextlib.suppress(OSError):
        _side.prestart()


class Command:
    """A command handed to the side process; its answers arrive through :class:`_Side`.

    With a ``capture`` sink, the side process reads the command's output (stdout and
    stderr merged) and hands it here as it comes; ``output_open`` says whether more may.
    """

    def __init__(
        self, side: _Side, number: int, program: str, capture: Sink | None = None
    ) -> None:
        self._side = side
        self.id = number
        self._program = program
        self._sink = capture
        self.output_open = capture is not None
        #: What the capture sink raised: the output was not taken (the call fails).
        self.failure: Exception | None = None
        self.pid = 0
        #: As in :mod:`subprocess`: the exit code, or ``-N`` when killed by signal N.
        self.returncode: int | None = None
        #: Why it could not start (then ``returncode`` is 127).
        self.error: OSError | None = None
        self._leftovers = False
        self._wants_pid = False
        self._settled = False  # the side process is done with it (or gone)
        self._waiter: asyncio.Future[None] | None = None
        self._waiter_thread = 0

    def _output(self, chunk: bytes) -> None:
        """Output the side process read for us."""
        sink = self._sink
        if sink is None:
            return
        try:
            sink(chunk)
        except Exception as exc:  # noqa: BLE001 - a sink that fails: the call fails
            self._sink = None
            self.failure = exc
            self.wake()

    def _take(self, answer: bytes) -> None:
        """An answer from the side process; ``b""``: the side process has gone."""
        if answer == b"closed":
            self.output_open = False
            if self._settled:
                self._side.calls.pop(self.id, None)
            self.wake()
            return
        if answer.startswith(b"pid "):
            self.pid = int(answer[4:])
            if self._wants_pid:  # else nobody waits for it alone: spare the wake-up
                self.wake()
            return
        if answer.startswith(b"exit "):
            status, _, tail = answer[5:].partition(b" ")
            self._leftovers = tail == b"leftovers"
            self._settled = not self._leftovers
            self.returncode = os.waitstatus_to_exitcode(int(status))
        elif answer.startswith(b"error "):
            errno, _, text = answer[6:].decode(errors="replace").partition(" ")
            # (named as a failed start is: toolrun's message then says what EAGAIN means)
            self.error, self.returncode = OSError(int(errno), text, self._program), 127
            self._settled = True
            self.output_open = False
        elif answer == b"swept":
            self._settled = True
        elif not answer:
            self._settled = True
            self.output_open = False
            if self.returncode is None:  # the side process died: take the command down
                if not self._side.jailed:  # (a jail's PID namespace died with it)
                    self.signal_group(signal.SIGKILL)
                if not self.pid:
                    self.error = OSError(f"the reaper side process ended before {self._program!r}")
                self.returncode = -signal.SIGKILL
        if self._settled and not self.output_open:
            self._side.calls.pop(self.id, None)
        self.wake()

    def wake(self) -> None:
        """Let the task waiting in :meth:`until` look again (from any thread)."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._waiter_thread == threading.get_ident():
            waiter.set_result(None)
        else:
            with contextlib.suppress(RuntimeError):  # its loop has closed
                waiter.get_loop().call_soon_threadsafe(_resolve, waiter)

    async def until(self, done: Callable[[], bool], grace: float | None = None) -> None:
        """Wait until ``done()`` (looked at again on each :meth:`wake`), at most ``grace`` s."""
        if done():
            return
        loop = asyncio.get_running_loop()
        self._side.listen(loop)
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            self.wake()

        timer = loop.call_later(grace, expire) if grace is not None else None
        self._waiter_thread = threading.get_ident()
        try:
            while not expired and not done():
                self._waiter = waiter = loop.create_future()
                # Looked at again once the waiter is in place: an answer taken in another
                # thread just before would otherwise have found nobody to wake.
                if done():
                    break
                await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    @property
    def settled(self) -> bool:
        """Whether the side process is done with it: exited with nothing left running
        (or it could not start, or the side process has gone)."""
        return self._settled

    async def started(self) -> int:
        """The pid, once the command runs; raises :class:`OSError` if it could not start."""
        self._wants_pid = True
        await self.until(lambda: bool(self.pid) or self.returncode is not None)
        if self.error is not None:
            raise self.error
        return self.pid

    async def wait(self) -> int:
        """The return code once it has exited (127 if it could not start: see ``error``)."""
        await self.until(lambda: self.returncode is not None)
        assert self.returncode is not None
        return self.returncode

    def signal_group(self, sig: signal.Signals) -> None:
        """Signal the command's process group (its session: it is the leader)."""
        if self._side.jailed:  # its pid is one of the jail's PID namespace
            self._side.owner.tell(self._side, ("signal", self.id, int(sig)))
            return
        if self.pid > 0:  # never killpg(0): that is our own group
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)

    async def finish(self) -> None:
        """Kill whatever the command left running, then let go of it.

        Call after :meth:`wait`; on a command still running, this kills its whole tree.
        """
        await self.sweep()
        self.close()

    async def sweep(self) -> None:
        """Kill whatever the exited command left running. Its captured output is still
        read, to its end (once what held the pipe is killed), until :meth:`close`."""
        if self._leftovers and not self._settled:
            self._side.owner.tell(self._side, ("sweep", self.id))
            await self.until(lambda: self._settled, SWEEP_WAIT_S)

    def close(self) -> None:
        """Let go; a command still running is killed with everything under it, and
        output still captured is no longer read."""
        self._sink = None
        if not self._settled or self.output_open:
            self._settled = True
            self.output_open = False
            self._side.calls.pop(self.id, None)
            self._side.owner.tell(self._side, ("drop", self.id))


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def launch(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    stdin: int | None = None,
    stdout: int | None = None,
    stderr: int | None = None,
    pass_fds: Mapping[int, int] | None = None,
    capture: Sink | None = None,
    side: _SideProcess | None = None,
) -> Command:
    """Hand ``argv`` to the side process, to run in a new session; do not wait for it.

    ``stdin``/``stdout``/``stderr`` are descriptors for the child (``None``: /dev/null);
    ``pass_fds`` maps more of ours to the numbers the child sees them as. The caller keeps
    (and closes) its descriptors. ``capture`` (instead of ``stdout`` and ``stderr``): the
    side process reads the merged output into it (see :class:`Command`). Whether it
    started shows in :meth:`Command.started` (or in ``error`` after :meth:`Command.wait`):
    not waiting for that here saves a round trip per call. ``side``: another side process
    than toolrun's own (a jail's, :func:`side_process`).
    """
    owner = side if side is not None else _side
    extra = dict(pass_fds or {})
    if capture is not None:  # (no stdin: the side process's /dev/null, no descriptor sent)
        fds = [] if stdin is None else [stdin]
    else:
        null = owner.devnull()
        fds = [fd if fd is not None else null for fd in (stdin, stdout, stderr)]
    # absolute: the side process has a working directory of its own (a resolved Path,
    # as the Bash tool's is, already says it the one way)
    where = os.fspath(cwd)
    if not where.startswith("/") or "/." in where or "//" in where:
        where = os.path.abspath(where)
    return owner.run(
        lambda side: side.run(
            list(argv), where, env, [*fds, *extra], [*extra.values()], len(fds), capture
        )
    )
