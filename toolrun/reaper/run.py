"""Run one command to its end: feed its input, collect its output, stop it, sweep after it.

Shared by the Bash tool and hook commands. The command runs in a session of its own under
the reaper side process. When it exits, whatever still holds its output pipes gets a short
grace period to finish writing; then everything the command left is killed. On timeout or
cancellation its process group gets SIGTERM, then SIGKILL, and then the same sweep takes
what escaped the group (``setsid``, a daemon).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Mapping, Sequence

import anyio

from toolrun.reaper.link import Command, launch

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
    """
    pipes: list[tuple[int, Sink]] = []  # our read ends
    theirs: list[int] = []
    feed: tuple[int, bytes] | None = None
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
            argv, cwd=cwd, env=env, stdin=stdin_fd, stdout=out_w, stderr=err_w, pass_fds=pass_fds
        )
    except BaseException:
        for fd in [fd for fd, _ in pipes] + ([feed[0]] if feed else []):
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    for fd, _ in pipes:
        os.set_blocking(fd, False)
    if feed is not None:
        os.set_blocking(feed[0], False)
    finished = False
    try:
        with anyio.move_on_after(time_limit):
            await _communicate(command, pipes, feed)
            finished = True
    finally:
        with anyio.CancelScope(shield=True):
            if not finished:
                await _stop(command)
            await command.finish()
            for fd, _ in pipes:
                os.close(fd)
    if command.error is not None:
        raise command.error
    return command.returncode if finished else None


async def _communicate(
    command: Command, pipes: list[tuple[int, Sink]], feed: tuple[int, bytes] | None
) -> None:
    """Until the command has exited and its pipes are closed (or its leftovers killed)."""
    closed = anyio.Event()
    open_pipes = [len(pipes)]

    async def pump(fd: int, sink: Sink) -> None:
        try:
            await drain(fd, sink)
        finally:
            open_pipes[0] -= 1
            if open_pipes[0] == 0:
                closed.set()

    async with anyio.create_task_group() as tg:
        if feed is not None:
            tg.start_soon(write_and_close, *feed)
        for fd, sink in pipes:
            tg.start_soon(pump, fd, sink)
        await command.wait()
        with anyio.move_on_after(OUTPUT_GRACE_S):
            await closed.wait()
        await command.finish()  # kills what it left, the holders of the pipes among them
        with anyio.move_on_after(OUTPUT_GRACE_S):
            await closed.wait()
        tg.cancel_scope.cancel()  # a writer still blocked on a pipe nobody reads


async def _stop(command: Command) -> None:
    """SIGTERM the process group, then SIGKILL what is left of it."""
    with contextlib.suppress(OSError):  # it never started: nothing to stop
        await command.started()
    if command.returncode is not None:
        return
    command.signal_group(signal.SIGTERM)
    with anyio.move_on_after(KILL_GRACE_S):
        await command.wait()
    command.signal_group(signal.SIGKILL)
    with anyio.move_on_after(KILL_GRACE_S):
        await command.wait()


async def drain(fd: int, sink: Sink) -> None:
    """Read the non-blocking ``fd`` into ``sink`` until end of file."""
    while True:
        await anyio.wait_readable(fd)
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            continue
        if not chunk:
            return
        sink(chunk)


async def write_and_close(fd: int, data: bytes) -> None:
    """Write ``data`` to the non-blocking ``fd`` and close it; a reader may stop reading."""
    view = memoryview(data)
    try:
        while view:
            await anyio.wait_writable(fd)
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                continue
    except OSError:  # EPIPE: the command did not read it all
        pass
    finally:
        os.close(fd)
