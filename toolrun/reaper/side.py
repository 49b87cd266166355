"""The reaper side process: it starts every Bash and hook command and kills what they leave.

toolrun starts it once (``python -I -S side.py FD [PID...]``, where FD is its end of the
control socket; the PIDs are children that are no command's leftovers: the network bridge
of the user's sandbox, which forks it and then becomes it) and asks it for each command. It uses the standard library only and imports nothing
from toolrun, so that it starts without site-packages in about 20 ms (``exec`` starts it
while it loads the plans).

Why a process of its own:

- It is a child subreaper: whatever a command leaves running, however it detached
  (``setsid``, a double fork, closed descriptors, a cleared environment), comes to this
  process when its parent exits. Its only children are the commands and such orphans, so
  nothing of toolrun's own (MCP servers, ``rg``) can be mistaken for one.
- An orphan whose session or process group is still that of a running command belongs to
  that command's call and is left alone until the call ends. Every other orphan belongs to
  a call that has ended and is killed when any call ends. (One that left its session
  while its call still runs cannot be told apart: it is killed early rather than late.)
- It learns that toolrun is gone from the end of the control socket, even after SIGKILL,
  and then kills every process under it before it exits (also on SIGTERM, SIGHUP, SIGINT).
  It runs in a session of its own, so a signal to toolrun's process group does not take it
  along. (A parent-death signal on each command would not do: it would kill the shell, not
  what the shell detached.) If the side process itself is killed, toolrun kills the
  running commands' process groups; what they detached survives that one case.
- Commands are started with ``posix_spawn`` (a vfork), as cheap as toolrun's own Popen.
  Forking this Python process per call, to set ``prctl`` bits in the child, cost 1-3 ms a
  call.

Protocol: one control socket (stream) carries everything, so a call costs toolrun no
socket of its own. toolrun to here: an 8-byte header (the payload length), then the payload,
``marshal.dumps(request)``:

- ``("run", N, argv, cwd, env, extra_targets, given)``, with the descriptors ``[stdin,
  stdout, stderr][:given] + extra`` as SCM_RIGHTS on the header: ``given`` is 3, or 1 or
  0 for a command whose output is captured (0: its stdin is /dev/null, and a request
  with no extra descriptors then carries none); ``env`` is ``(SLOT, table)`` the first
  time and ``SLOT`` after that (:meth:`Reaper.environment`); N is toolrun's number for it;
- ``("sweep", N)``: kill what call N left (answered ``N swept``);
- ``("drop", N)``: toolrun lets go of call N; still running, its whole tree is killed (and
  its captured output is no longer read);
- ``("signal", N, SIG)``: signal call N's process group (a jailed side process runs in a
  PID namespace of its own, where toolrun's pids mean nothing).

Here to toolrun, one line an answer: ``N pid PID`` or ``N error ERRNO TEXT``, then ``N exit
STATUS`` (a raw wait status) with `` leftovers`` appended when something of a finished call
is still running. Answers wait in an outbox when toolrun does not read them at once: this
process never blocks on toolrun, which may be blocked sending the next request.

Captured (``given`` below 3): the command's stdout and stderr are one pipe that this
process reads (a command's output then costs toolrun no pipe, registration or wake-up of
its own): ``N out LEN`` followed by LEN bytes of output, as they come, then ``N closed``
once no process holds the pipe any more. A command that exits has its pipe drained first, so a short
command's output, ``closed`` and ``exit`` reach toolrun together. While more than
:data:`OUTBOX_HIGH` bytes wait for toolrun, no output is read (the commands block on
their pipes as they would on toolrun's own), until it is down to :data:`OUTBOX_LOW`.

Kept in one module: it runs as one standard-library script (``python -I -S
side.py``), started before toolrun's package loads; every extra module would be a file
to find and open on each start.
"""

from __future__ import annotations

import array
import collections
import contextlib
import fcntl
import marshal
import os
import select
import signal
import socket
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
HEADER = 8
#: How many environments are held between calls (most runs use one).
ENV_SLOTS = 8
MAX_FDS = 253  # the kernel's own limit for one message (SCM_MAX_FD)
#: Plain ints: or-ing the IntFlag constants costs a Python call each time.
RECV_FLAGS = int(socket.MSG_DONTWAIT) | int(socket.MSG_CMSG_CLOEXEC)
SEND_FLAGS = int(socket.MSG_DONTWAIT) | int(socket.MSG_NOSIGNAL)
READ, WRITE = int(select.EPOLLIN), int(select.EPOLLOUT)
FDS_SPACE = socket.CMSG_SPACE(MAX_FDS * 4)
#: How long a kill waits for its processes to die (one in the D state may never).
KILL_WAIT_S = 2.0
#: Signals that end the side process, after it has killed every process under it.
STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGHUP, signal.SIGINT})
#: Ignored here (by Python) and so by a spawned child: put back to the default for it.
RESET_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ)
#: Captured output stops being read while this much waits for toolrun, and is read
#: again once it is down to OUTBOX_LOW.
OUTBOX_HIGH = 1 << 20
OUTBOX_LOW = 1 << 18
#: The most of one command's output read at a time (then the loop serves the others).
READ_CHUNK = 65536
#: The most of toolrun's requests read at once.
RECEIVE_BYTES = 65536


def prctl(option: int, value: int) -> None:
    import ctypes  # here: toolrun imports this module for its constants

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


class Call:
    """One command toolrun has asked for, by the number toolrun gave it."""

    __slots__ = ("ended", "number", "pid", "status")

    def __init__(self, number: int, pid: int) -> None:
        self.number = number
        self.pid = pid
        self.status: int | None = None  # the wait status once it has exited
        self.ended = False  # toolrun is done with it (or abandoned it)


class Output:
    """The read end of a captured command's output pipe, read here for toolrun."""

    __slots__ = ("fd", "number")

    def __init__(self, fd: int, number: int) -> None:
        self.fd = fd
        self.number = number


class Reaper:
    def __init__(self, control: socket.socket, keep: frozenset[int] = frozenset()) -> None:
        self.control = control
        self.me = os.getpid()
        #: Children that are not commands and never leftovers (the sandbox's network
        #: bridge, forked before this process was exec'd in its place).
        self.keep = keep
        #: One of them ended (a command killed the bridge): this sandbox is done for.
        self.broken = False
        self.calls: dict[int, Call] = {}  # by pid
        self.numbered: dict[int, Call] = {}  # by toolrun's number, until toolrun is done
        self.inbox = bytearray()  # the start of a request not yet complete
        self.received: collections.deque[int] = collections.deque()  # its descriptors
        self.outbox = bytearray()  # answers not sent yet: never block on toolrun
        self.writing = False
        self.envs: list[dict[str, str] | None] = [None] * ENV_SLOTS
        self.outputs: dict[int, Output] = {}  # captured output being read, by descriptor
        self.captured: dict[int, Output] = {}  # the same, by toolrun's number
        self.paused = False  # output is not read: too much waits for toolrun
        self.null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        self.wakeup_r, wakeup_w = os.pipe()
        os.set_blocking(self.wakeup_r, False)
        os.set_blocking(wakeup_w, False)
        signal.set_wakeup_fd(wakeup_w)
        for sig in (signal.SIGCHLD, *STOP_SIGNALS):
            signal.signal(sig, lambda *_: None)  # handled in the loop, through the wakeup fd
        self.poll = select.epoll()
        self.poll.register(control.fileno(), READ)
        self.poll.register(self.wakeup_r, READ)
        try:  # read again from the start after each exit: one call, not three
            self.children_fd = os.open(
                f"/proc/{self.me}/task/{self.me}/children", os.O_RDONLY | os.O_CLOEXEC
            )
        except OSError:  # a kernel without CONFIG_PROC_CHILDREN
            self.children_fd = -1

    # ------------------------------------------------------------------ main loop

    def serve(self) -> None:
        control = self.control.fileno()
        while True:
            for fd, events in self.poll.poll():
                if fd == control:
                    if events & READ and not self.requests():
                        self.calls.clear()  # every command is now a leftover
                        self.sweep()
                        return
                elif fd in self.outputs:
                    self.read_output(self.outputs[fd])
                elif fd == self.wakeup_r:  # (not an output released earlier in this batch)
                    try:
                        signals = set(os.read(self.wakeup_r, 4096))
                    except BlockingIOError:
                        signals = set()
                    if signals & STOP_SIGNALS:  # asked to stop: take everything along
                        self.calls.clear()
                        self.sweep()
                        return
                    self.reap()
            self.flush()
            if self.broken:  # toolrun starts a new sandbox (and bridge) for the next call
                self.calls.clear()
                self.sweep()
                return

    def answer(self, call: Call | int, text: bytes) -> None:
        number = call.number if isinstance(call, Call) else call
        self.outbox += b"%d %s\n" % (number, text)

    def flush(self) -> None:
        """Send what the outbox holds, as much as the socket takes now; the rest when it
        is writable (toolrun may be busy sending, and must never wait for us)."""
        if self.outbox:
            try:
                del self.outbox[: self.control.send(self.outbox, SEND_FLAGS)]
            except BlockingIOError:
                pass
            except OSError:  # toolrun has gone: its end of the socket says so next
                self.outbox.clear()
        writing = bool(self.outbox)
        if writing != self.writing:
            self.writing = writing
            self.poll.modify(self.control.fileno(), READ | (WRITE if writing else 0))
        if self.paused != (len(self.outbox) > (OUTBOX_LOW if self.paused else OUTBOX_HIGH)):
            self.paused = not self.paused
            for output in self.outputs.values():
                self.poll.modify(output.fd, 0 if self.paused else READ)

    # ------------------------------------------------------------------ captured output

    def capture(self, number: int) -> int:
        """A pipe for call ``number``'s output, read here: the end the command writes to."""
        read_end, write_end = os.pipe()
        os.set_blocking(read_end, False)
        output = Output(read_end, number)
        self.outputs[read_end] = self.captured[number] = output
        self.poll.register(read_end, 0 if self.paused else READ)
        return write_end

    def read_output(self, output: Output) -> None:
        """Pass on what the command wrote, up to READ_CHUNK; at the end, that it ended."""
        try:
            chunk = os.read(output.fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:  # EIO and the like: as if it had ended
            chunk = b""
        if chunk:
            self.outbox += b"%d out %d\n" % (output.number, len(chunk))
            self.outbox += chunk
            return
        self.release(output)
        self.answer(output.number, b"closed")

    def drain(self, number: int) -> None:
        """Read what an exited command left in its pipe, before its exit is told (unless
        toolrun is behind: then it comes as the pipe is read again)."""
        output = self.captured.get(number)
        while output is not None and not self.paused and output.fd in self.outputs:
            before = len(self.outbox)
            self.read_output(output)
            if len(self.outbox) == before and output.fd in self.outputs:
                return  # nothing more yet: a leftover holds the pipe
            if len(self.outbox) > OUTBOX_HIGH:
                return

    def release(self, output: Output) -> None:
        self.outputs.pop(output.fd, None)
        self.captured.pop(output.number, None)
        with contextlib.suppress(OSError):
            self.poll.unregister(output.fd)
        os.close(output.fd)

    def requests(self) -> bool:
        """Carry out every request there is; False once toolrun has gone.

        Whatever has arrived is read at once; the kernel ends a read after a message
        that carries descriptors, so they come in order, and each run takes its own
        from the front of the queue."""
        while True:
            try:
                data, ancillary, _, _ = self.control.recvmsg(RECEIVE_BYTES, FDS_SPACE, RECV_FLAGS)
            except BlockingIOError:
                break
            except OSError:
                return False
            for level, kind, raw in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    got = array.array("i")
                    got.frombytes(raw[: len(raw) - len(raw) % got.itemsize])
                    self.received.extend(got)
            if not data:
                return False
            self.inbox += data
            if not ancillary and len(data) < RECEIVE_BYTES:
                break  # all there was (more wakes the loop again): spares a recvmsg
        inbox = self.inbox
        while len(inbox) >= HEADER:
            end = HEADER + int.from_bytes(inbox[:HEADER], "big")
            if len(inbox) < end:
                break  # the rest is on its way
            kind, number, *rest = marshal.loads(inbox[HEADER:end])
            del inbox[:end]
            if kind == "run":
                argv, cwd, env_ref, targets, given = rest
                count = min(given + len(targets), len(self.received))
                fds = [self.received.popleft() for _ in range(count)]
                self.start(number, argv, cwd, env_ref, targets, fds, given)
            elif kind == "sweep":  # after "exit N leftovers"
                self.drop(number, keep_output=True)  # read to its end once swept
                self.sweep()
                self.answer(number, b"swept")
            elif kind == "drop":
                self.drop(number)
            elif kind == "signal":
                self.signal_call(number, rest[0])
        return True

    def start(
        self,
        number: int,
        argv: list[str],
        cwd: str,
        env_ref: int | tuple[int, dict[str, str]],
        targets: list[int],
        fds: list[int],
        given: int = 3,
    ) -> None:
        """Start the command of one request; answer with its pid, or why it did not start.

        ``fds``: the first ``given`` of stdin, stdout and stderr, then the extra ones; with
        ``given`` below 3 the output is captured (and stdin, if not given, is /dev/null)."""
        owned = list(fds)  # closed here once the command has them (or never will)
        try:
            if given < 3:
                write_end = self.capture(number)
                owned.append(write_end)
                stdin = fds[0] if given else self.null
                stdio, extra = [stdin, write_end, write_end], fds[given:]
            else:
                stdio, extra = fds[:3], fds[3:]
            env = self.environment(env_ref)
            pid = self.spawn(argv, cwd, env, stdio, list(zip(extra, targets, strict=True)))
        except (OSError, ValueError, LookupError) as exc:  # ValueError: a NUL byte in an argument
            errno = exc.errno if isinstance(exc, OSError) else 0
            text = exc.strerror if isinstance(exc, OSError) else None
            why = f"{text or exc}".replace("\n", " ")
            output = self.captured.get(number)
            if output is not None:
                self.release(output)  # nothing will write to it: no "closed" either
            self.answer(number, f"error {errno or 0} {why}".encode(errors="replace"))
            return
        finally:
            for fd in owned:
                os.close(fd)
        call = Call(number, pid)
        self.calls[pid] = call
        self.numbered[number] = call
        self.answer(call, b"pid %d" % pid)

    def environment(self, ref: int | tuple[int, dict[str, str]]) -> dict[str, str]:
        """The environment a request names: a slot held from an earlier request, or a new
        table to hold in a slot (toolrun numbers the slots and reuses the oldest)."""
        if isinstance(ref, tuple):
            slot, env = ref
            self.envs[slot] = env
            return env
        held = self.envs[ref]
        if held is None:
            raise LookupError(f"no environment held in slot {ref}")
        return held

    def spawn(
        self,
        argv: list[str],
        cwd: str,
        env: dict[str, str],
        stdio: list[int],
        extra: list[tuple[int, int]],
    ) -> int:
        """posix_spawn (a vfork: as cheap as toolrun's own Popen) in a new session."""
        program = _which(argv[0], env)
        os.chdir(cwd)  # the child inherits it; this process never uses relative paths
        pairs = list(zip(stdio, (0, 1, 2), strict=True)) + extra
        targets = {target for _, target in pairs}
        if any(fd in targets for fd, _ in pairs):
            # A source numbered like a later target would be overwritten first (and one
            # numbered like its own target would keep close-on-exec): move them all up.
            floor = max([fd for pair in pairs for fd in pair] + [2]) + 1
            moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor) for fd, _ in pairs]
        else:
            moved = []
        try:
            return os.posix_spawn(
                program,
                argv,
                env,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, fd, target)
                    for fd, (_, target) in zip(moved or [fd for fd, _ in pairs], pairs, strict=True)
                ],
                setsid=True,
                setsigdef=RESET_SIGNALS,
            )
        finally:
            for fd in moved:
                os.close(fd)

    def signal_call(self, number: int, sig: int) -> None:
        """Signal a running call's process group (it leads its own session)."""
        call = self.numbered.get(number)
        if call is not None and call.status is None:
            with contextlib.suppress(OSError):
                os.killpg(call.pid, sig)

    def drop(self, number: int, *, keep_output: bool = False) -> None:
        """toolrun lets go of a call: one still running is killed with its whole tree.
        Its captured output is no longer read, unless ``keep_output``."""
        output = self.captured.get(number)
        if output is not None and not keep_output:
            self.release(output)
        call = self.numbered.pop(number, None)
        if call is None:
            return
        call.ended = True
        if call.status is None:
            self.kill_trees({call.pid})
            self.sweep()
        elif self.calls.get(call.pid) is call:
            del self.calls[call.pid]

    # ------------------------------------------------------------------ processes

    def reap(self) -> None:
        """Collect every child that has exited; tell toolrun about its commands."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            call = self.calls.get(pid)
            if call is None:
                self.broken = self.broken or pid in self.keep
                continue
            call.status = status
            if call.ended:  # toolrun let go of it (abandoned): nothing to tell
                del self.calls[pid]
                continue
            self.drain(call.number)
            if self.leftovers():
                self.answer(call, b"exit %d leftovers" % status)  # toolrun asks for a sweep
            else:
                self.answer(call, b"exit %d" % status)
                call.ended = True
                del self.calls[pid]
                self.numbered.pop(call.number, None)

    def children(self) -> list[int]:
        if self.children_fd >= 0:
            size = 8192
            while len(listed := os.pread(self.children_fd, size, 0)) == size:
                size *= 2  # read again until it all fits
            return [int(p) for p in listed.split()]
        return [pid for pid, ppid in _parents().items() if ppid == self.me]

    def leftovers(self) -> set[int]:
        """Children that are neither running commands nor orphans of one: ended calls' rest."""
        running = {p for p, call in self.calls.items() if call.status is None and not call.ended}
        left = set()
        for pid in self.children():
            if pid in running or pid in self.keep:
                continue
            ids = _group_and_session(pid)
            if ids is not None and not running.isdisjoint(ids):
                continue  # detached from a call that still runs: its own until it ends
            left.add(pid)
        return left

    def sweep(self) -> None:
        """Kill every leftover; again while killing one hands us its orphans."""
        for _ in range(100):
            left = self.leftovers()
            if not left:
                return
            self.kill_trees(left)

    def kill_trees(self, roots: set[int]) -> None:
        """Kill ``roots`` and everything under them, then reap what was ours.

        The trees are frozen top-down with SIGSTOP, again until nothing new appears, so
        that nothing can fork its way out; then everything gets SIGKILL. Each process is
        pinned by a pidfd and checked to still be in the tree before it is signalled, so
        a recycled pid is never hit.
        """
        if not roots:
            return
        pinned: dict[int, int] = {}
        try:
            for _ in range(1000):
                fresh = [pid for pid in _tree(roots) if pid not in pinned]
                if not fresh:
                    break
                for pid in fresh:
                    fd = _pin(pid, roots, pinned)
                    if fd is not None:
                        pinned[pid] = fd
                        _signal(fd, signal.SIGSTOP)
            for fd in pinned.values():
                _signal(fd, signal.SIGKILL)
            deadline = time.monotonic() + KILL_WAIT_S
            for fd in pinned.values():
                select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            for fd in pinned.values():
                os.close(fd)
        self.reap()


def _which(program: str, env: dict[str, str]) -> str:
    """``program`` found as ``execvpe`` would find it, on the command's own PATH."""
    if "/" in program:
        return program
    for folder in env.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", program)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    raise FileNotFoundError(2, f"No such file or directory: {program!r}")


def _parents() -> dict[int, int]:
    """pid -> ppid of every process."""
    parents: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except FileNotFoundError:  # not Linux
        return parents
    for name in names:
        if name.isdigit():
            ppid = _ppid(int(name))
            if ppid is not None:
                parents[int(name)] = ppid
    return parents


def _stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat from the state on (state, ppid, pgrp, session, ...)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # the command name may hold spaces and parentheses: parse after the last ')'
    return stat.rpartition(b")")[2].split()


def _ppid(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields is not None else None


def _group_and_session(pid: int) -> tuple[int, int] | None:
    fields = _stat(pid)
    return (int(fields[2]), int(fields[3])) if fields is not None else None


def _tree(roots: set[int]) -> list[int]:
    """``roots`` and their living descendants, parents before children."""
    below: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        below.setdefault(ppid, []).append(pid)
    order = [pid for pid in roots if os.path.exists(f"/proc/{pid}")]
    for pid in order:  # grows as it goes: a breadth-first walk
        order.extend(below.get(pid, ()))
    return order


def _pin(pid: int, roots: set[int], pinned: dict[int, int]) -> int | None:
    """A pidfd for ``pid`` if it is still a root or a child of a pinned process."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return None
    if pid in roots or _ppid(pid) in pinned:
        return fd
    os.close(fd)
    return None


def _signal(pidfd: int, sig: int) -> None:
    with contextlib.suppress(OSError):
        signal.pidfd_send_signal(pidfd, sig)


def main() -> None:
    fd = int(sys.argv[1])
    keep = frozenset(int(pid) for pid in sys.argv[2:])
    # posix_spawn passed on whatever toolrun inherited without close-on-exec (a CI
    # runner's descriptors, say); this process spawns with posix_spawn too, so it must
    # not hold them, or every command would.
    os.closerange(3, fd)
    os.closerange(fd + 1, os.sysconf("SC_OPEN_MAX"))
    control = socket.socket(fileno=fd)
    control.set_inheritable(False)
    # Not Linux: orphans go to init and only process groups are killed; the rest works.
    with contextlib.suppress(AttributeError, OSError):
        prctl(PR_SET_CHILD_SUBREAPER, 1)
    # Not dumpable: inside a sandbox or jail its commands run as the same user, and must
    # not read its memory or /proc/PID/environ (toolrun's whole environment, hidden
    # variables too) nor write its memory (its socket to toolrun). exec makes each
    # command dumpable again.
    with contextlib.suppress(AttributeError, OSError):
        prctl(PR_SET_DUMPABLE, 0)
    Reaper(control, keep).serve()


if __name__ == "__main__":
    main()
