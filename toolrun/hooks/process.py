"""Run one hook command: ``/bin/sh -c COMMAND`` in its own session.

The JSON input is written on stdin while stdout and stderr are read, all
concurrently, so a hook that never reads its stdin, exits early or prints
megabytes can neither block nor crash toolrun (a broken pipe is ignored; what
is kept of each stream is capped). On timeout, or on cancellation, its process
group is terminated (SIGTERM, then SIGKILL). Whatever the hook leaves running
(a background job, a ``setsid`` daemon) is killed when it ends: see
:mod:`toolrun.reaper`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolrun.reaper.run import run_command as run_supervised

if TYPE_CHECKING:
    from toolrun.sandbox.run import Launcher

SHELL = "/bin/sh"
MAX_OUTPUT_BYTES = 1024 * 1024  # kept of each of stdout and stderr


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
    #: an http hook: the response's status (None: no response, or a command hook)
    http_status: int | None = None
    #: why it could not do its job, when the result says it beyond an exit code (an http
    #: hook's ``http_error`` or ``url_not_allowed``); ``spawn_error`` says the detail
    failure: str | None = None


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
    launch: Launcher | None = None,
) -> ProcessResult:
    """Run ``command`` with ``stdin`` as its input, for at most ``time_limit`` seconds.
    ``launch`` wraps the command line (the sandbox puts it under bwrap).

    Never raises for the hook's own failures (they are in the result).
    """
    start = time.monotonic()
    out, err = _Capture(limit), _Capture(limit)
    argv: list[str] = [SHELL, "-c", command]
    fds: tuple[int, ...] = ()
    if launch is not None:
        argv, env, fds = launch(argv, cwd, env)
    try:
        returncode = await run_supervised(
            argv,
            cwd=cwd,
            env=env,
            time_limit=time_limit,
            stdout=out.add,
            stderr=err.add,
            stdin=stdin,
            pass_fds={fd: fd for fd in fds},
        )
    except OSError as exc:
        return ProcessResult(None, "", "", _elapsed(start), spawn_error=str(exc))
    finally:
        for fd in fds:  # copied to the side process when the command started
            os.close(fd)
    return ProcessResult(
        returncode=returncode,
        stdout=out.text(),
        stderr=err.text(),
        duration_ms=_elapsed(start),
        timed_out=returncode is None,
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
    )


def _elapsed(start: float) -> int:
    return round((time.monotonic() - start) * 1000)
