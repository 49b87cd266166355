"""Run one command to its end: feed its input, collect its output, stop it, sweep after it.

Shared by the Bash tool and hook commands. The command runs in a session of its own under
the reaper side process. When it exits, whatever still holds its output pipes gets a short
grace period to finish writing; then everything the command left is killed. On timeout or
cancellation its process group gets SIGTERM, then SIGKILL, and then the same sweep takes
what escaped the group (``setsid``, a daemon).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Mapping, Sequence

import anyio

from toolrun.reaper import jail as jails
from toolrun.reaper import sandboxed
from toolrun.reaper.link import Command, _SideProcess, launch

#: After the command exits, how long what it left may keep its output pipes open.
OUTPUT_GRACE_S = 0.25
#: Between SIGTERM and SIGKILL when a command is stopped.
KILL_GRACE_S = 0.5

Sink = Callable[[bytes], None]


async def run_command(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    time_limit: float,
    stdout: Sink,
    stderr: Sink | None = None,
    stdin: bytes | None = None,
    pass_fds: Mapping[int, int] | None = None,
) -> int | None:
    """Run ``argv``; return its return code (``-N`` for signal N), or None on timeout.

    With ``stderr=None`` both streams go, merged in order, to ``stdout``. Without ``stdin``
    the command reads /dev/null. ``pass_fds`` is as for :func:`~toolrun.reaper.link.launch`.
    Raises :class:`OSError` when it cannot start.

    Merged output with no input (a Bash call) is read by the side process, which hands it
    over with the command's other answers; otherwise the pipes are ours.

    Inside a call the executor jailed (:data:`toolrun.reaper.jail.current`), the command
    starts on the jail's side process, with the jail's TMPDIR and working-directory probe;
    inside a sandboxed call (:data:`toolrun.reaper.sandboxed.current`), on the sandbox's.
    """
    jail = jails.current.get()
    if jail is None:
        box = sandboxed.current.get()
        if box is None:
            return await _run(argv, cwd, env, time_limit, stdout, stderr, stdin, pass_fds, None)
        return await _on_side(box.side, box.probes, argv, cwd, env, time_limit, stdout,
                              stderr, stdin, pass_fds)
    from toolrun.sandbox.jail import jail_folders

    where = jail_folders()
    if jail.private_tmp:
        env = {**env, "TMPDIR": str(where.tmp)}
    return await _on_side(jail.side, str(where.cwd), argv, cwd, env, time_limit, stdout,
                          stderr, stdin, pass_fds)


async def _on_side(
    side: _SideProcess,
    probes: str,
    argv: Sequence[str],
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    time_limit: float,
    stdout: Sink,
    stderr: Sink | None,
    stdin: bytes | None,
    pass_fds: Mapping[int, int] | None,
) -> int | None:
    """On a jail's or a sandbox's side process: the Bash working-directory probe is written
    in ``probes`` (a folder the command may write, the one it sees), then copied out."""
    inner, inside, outside = sandboxed.inside_probe(probes, env)
    try:
        return await _run(argv, cwd, inner, time_limit, stdout, stderr, stdin, pass_fds, side)
    finally:
        if inside is not None and outside is not None:
            from toolrun.sandbox.jail import take_cwd

            take_cwd(inside, outside)


async def _run(
    argv: Sequence[str],
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    time_limit: float,
    stdout: Sink,
    stderr: Sink | None,
    stdin: bytes | None,
    pass_fds: Mapping[int, int] | None,
    side: _SideProcess | None,
) -> int | None:
    pipes: list[tuple[int, Sink]] = []  # our read ends
    theirs: list[int] = []
    feed: tuple[int, bytes] | None = None
    if stdin is None and stderr is None:
        command = launch(argv, cwd=cwd, env=env, pass_fds=pass_fds, capture=stdout, side=side)
        return await _supervise(command, _Watch(asyncio.get_running_loop(), command, [], None),
                                time_limit)
    try:
        stdin_fd = None
        if stdin is not None:
            read_end, write_end = os.pipe()
            theirs.append(read_end)
            feed, stdin_fd = (write_end, stdin), read_end
        out_r, out_w = os.pipe()
        pipes.append((out_r, stdout))
        theirs.append(out_w)
        err_w = out_w
        if stderr is not None:
            err_r, err_w = os.pipe()
            pipes.append((err_r, stderr))
            theirs.append(err_w)
        command = launch(
            argv, cwd=cwd, env=env, stdin=stdin_fd, stdout=out_w, stderr=err_w,
            pass_fds=pass_fds, side=side,
        )
    except BaseException:
        for fd in [fd for fd, _ in pipes] + ([feed[0]] if feed else []):
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    try:
        for fd, _ in pipes:
            os.set_blocking(fd, False)
        if feed is not None:
            os.set_blocking(feed[0], False)
        watch = _Watch(asyncio.get_running_loop(), command, pipes, feed)
        return await _supervise(command, watch, time_limit)
    finally:
        for fd, _ in pipes:
            os.close(fd)


async def _supervise(command: Command, watch: _Watch, time_limit: float) -> int | None:
    """Until the command and its output end (or the time limit, or a cancel: then it is
    stopped); its return code, or None on timeout."""
    finished = False
    try:
        finished = await watch.communicate(time_limit)
    finally:
        watch.close()
        if not finished:
            with anyio.CancelScope(shield=True):
                await _stop(command)
                await command.finish()
        command.close()
    if command.error is not None:
        raise command.error
    return command.returncode if finished else None


class _Watch:
    """A running command's pipes, read by event-loop callbacks as data comes.

    One registration per pipe for the whole call, and no task: waiting through
    ``anyio.wait_readable`` in a task per pipe cost a task, a registration and a wake-up
    per read, which made up most of toolrun's own time per short command. The command's
    answers (its exit) come through :mod:`toolrun.reaper.link`, which wakes the same wait.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        command: Command,
        pipes: list[tuple[int, Sink]],
        feed: tuple[int, bytes] | None,
    ) -> None:
        self._loop = loop
        self._command = command
        self._readers: list[int] = []
        self._failure: Exception | None = None
        self._expired = False  # the time limit has passed
        self._feed: tuple[int, memoryview] | None = None
        for fd, sink in pipes:
            loop.add_reader(fd, self._on_output, fd, sink)
            self._readers.append(fd)
        if feed is not None:
            self._feed = (feed[0], memoryview(feed[1]))
            self._on_writable()  # most input fits in the pipe: then no registration at all
            if self._feed is not None:
                loop.add_writer(feed[0], self._on_writable)

    async def communicate(self, time_limit: float) -> bool:
        """Until the command has exited and its pipes are closed (or its leftovers killed);
        False if ``time_limit`` seconds passed first. (A timer of the loop's own, not a
        cancel scope: that cost a fifth of this function's time on a short command.)"""
        command = self._command
        deadline = self._loop.call_later(time_limit, self._expire)
        try:
            await self._until(lambda: command.returncode is not None)
            if self._closed() and command.settled:
                return not self._expired  # the usual end: its output and exit came together
            if not self._expired:
                await self._until(self._closed, OUTPUT_GRACE_S)
            if not self._expired:
                await command.sweep()  # kills what it left, the holders of the pipes too
            if not self._expired:
                await self._until(self._closed, OUTPUT_GRACE_S)
            return not self._expired
        finally:
            deadline.cancel()

    def _expire(self) -> None:
        self._expired = True
        self._command.wake()

    def close(self) -> None:
        """Stop watching; a writer still blocked on a pipe nobody reads gives up."""
        for fd in self._readers:
            self._loop.remove_reader(fd)
        self._readers.clear()
        if self._feed is not None:
            self._loop.remove_writer(self._feed[0])
            os.close(self._feed[0])
            self._feed = None

    def _closed(self) -> bool:
        return not self._readers and not self._command.output_open

    async def _until(self, done: Callable[[], bool], grace: float | None = None) -> None:
        command = self._command
        await command.until(
            lambda: self._failure is not None
            or command.failure is not None
            or self._expired
            or done(),
            grace,
        )
        failure = self._failure or command.failure
        if failure is not None:
            raise failure

    def _on_output(self, fd: int, sink: Sink) -> None:
        try:
            for _ in range(16):  # then let the loop run: a fast writer could keep us here
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    return
                if not chunk:
                    self._loop.remove_reader(fd)
                    self._readers.remove(fd)
                    self._command.wake()
                    return
                sink(chunk)
        except Exception as exc:  # noqa: BLE001 - a sink or read that fails: the call fails
            self.close()
            self._failure = exc
            self._command.wake()

    def _on_writable(self) -> None:
        assert self._feed is not None
        fd, view = self._feed
        try:
            while view:
                view = view[os.write(fd, view) :]
        except BlockingIOError:
            self._feed = (fd, view)
            return
        except OSError:  # EPIPE: the command did not read it all
            pass
        self._loop.remove_writer(fd)
        os.close(fd)
        self._feed = None


async def _stop(command: Command) -> None:
    """SIGTERM the process group, then SIGKILL what is left of it. A command whose start
    is not heard of within the grace (its answer lost to an interrupt that landed while
    answers were read, or a side process that stalls) is left to :meth:`Command.close`,
    which has the side process kill its whole tree: a stop never waits unbounded."""
    with contextlib.suppress(OSError), anyio.move_on_after(KILL_GRACE_S):
        await command.started()  # (OSError: it never started, nothing to stop)
    if command.returncode is not None or not command.pid:
        return
    command.signal_group(signal.SIGTERM)
    with anyio.move_on_after(KILL_GRACE_S):
        await command.wait()
    command.signal_group(signal.SIGKILL)
    with anyio.move_on_after(KILL_GRACE_S):
        await command.wait()
