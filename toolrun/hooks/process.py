"""Run one hook command: ``/bin/sh -c COMMAND`` in its own process group.

The JSON input is written on stdin while stdout and stderr are read, all
concurrently, so a hook that never reads its stdin, exits early or prints
megabytes can neither block nor crash toolrun (a broken pipe is ignored; what
is kept of each stream is capped). On timeout, or on cancellation, the whole
process group is terminated (SIGTERM, then SIGKILL). When the shell exits
but something it started in the background still holds the pipes, that
leftover group is killed after a short grace period.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.abc

SHELL = "/bin/sh"
MAX_OUTPUT_BYTES = 1024 * 1024  # kept of each of stdout and stderr
PIPE_GRACE_S = 0.25  # after the shell exits, how long background holders may keep the pipes
KILL_GRACE_S = 0.5  # between SIGTERM and SIGKILL
_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """How a hook process ended.

    ``returncode`` follows :mod:`subprocess`: negative ``-N`` when killed by
    signal N; None when it timed out or never started (``spawn_error``).
    """

    returncode: int | None
    stdout: str
    stderr: str
    duration_ms: int
    timed_out: bool = False
    spawn_error: str | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False


@dataclass(slots=True)
class _Capture:
    limit: int
    data: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.data)

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


async def run_command(
    command: str,
    stdin: bytes,
    *,
    cwd: Path,
    env: Mapping[str, str],
    time_limit: float,
    limit: int = MAX_OUTPUT_BYTES,
) -> ProcessResult:
    """Run ``command`` with ``stdin`` as its input, for at most ``time_limit`` seconds.

    Never raises for the hook's own failures (they are in the result).
    """
    start = time.monotonic()
    try:
        process = await anyio.open_process(
            [SHELL, "-c", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        return ProcessResult(None, "", "", _elapsed(start), spawn_error=str(exc))
    out, err = _Capture(limit), _Capture(limit)
    finished = False
    try:
        with anyio.move_on_after(time_limit):
            await _communicate(process, stdin, out, err)
            finished = True
    finally:
        with anyio.CancelScope(shield=True):
            if not finished:
                await _stop(process)
            await process.aclose()
    return ProcessResult(
        returncode=process.returncode if finished else None,
        stdout=out.text(),
        stderr=err.text(),
        duration_ms=_elapsed(start),
        timed_out=not finished,
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
    )


def _elapsed(start: float) -> int:
    return round((time.monotonic() - start) * 1000)


async def _communicate(
    process: anyio.abc.Process, data: bytes, out: _Capture, err: _Capture
) -> None:
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    closed = anyio.Event()
    open_pipes = [2]

    async def pump(stream: anyio.abc.ByteReceiveStream, capture: _Capture) -> None:
        try:
            async for chunk in stream:
                capture.add(chunk)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            open_pipes[0] -= 1
            if open_pipes[0] == 0:
                closed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(_feed, process.stdin, data)
        tg.start_soon(pump, process.stdout, out)
        tg.start_soon(pump, process.stderr, err)
        # Normally the pipes close when the shell exits. Poll the exit status too,
        # so that a background child still holding a pipe is noticed.
        while not closed.is_set() and process.returncode is None:
            with anyio.move_on_after(_POLL_S):
                await closed.wait()
        if not closed.is_set():
            with anyio.move_on_after(PIPE_GRACE_S):
                await closed.wait()
        if not closed.is_set():
            _signal_group(process.pid, signal.SIGKILL)
            with anyio.move_on_after(PIPE_GRACE_S):
                await closed.wait()
        await process.wait()
        tg.cancel_scope.cancel()  # a writer still blocked on a pipe nobody reads


async def _feed(stdin: anyio.abc.ByteSendStream, data: bytes) -> None:
    """Write the input and close stdin; a hook that does not read it is fine."""
    try:
        if data:
            await stdin.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    finally:
        try:
            await stdin.aclose()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass


async def _stop(process: anyio.abc.Process) -> None:
    """SIGTERM the whole process group, then SIGKILL whatever is left of it."""
    _signal_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(KILL_GRACE_S):
        await process.wait()
    _signal_group(process.pid, signal.SIGKILL)
    await process.wait()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
