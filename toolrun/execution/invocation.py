"""Running one allowed call: timeout, retry of transient OS errors, errors as results."""

from __future__ import annotations

import contextlib
import errno
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from toolrun.dataclass_init import fast_init
from toolrun.errors import ToolError, ToolTimeoutError
from toolrun.execution.results import Status
from toolrun.tools import progress
from toolrun.tools.base import Tool, ToolContext, ToolOutput

if TYPE_CHECKING:
    from pydantic import BaseModel

    from toolrun.tools.inputs import Params

_NO_LIMIT = contextlib.nullcontext()
TRANSIENT_ERRNOS = frozenset({errno.EBUSY, errno.EAGAIN, errno.EMFILE, errno.ENFILE})
BACKOFF_S = (0.2, 0.4)  # at most two retries


@fast_init
@dataclass(frozen=True, slots=True)
class Outcome:
    """What running a tool came to: its status, output and error, attempts and times."""

    status: Status
    output: str
    error: str | None
    attempts: int
    started_at: float
    finished_at: float
    metadata: dict[str, Any]


Sleep = Callable[[float], Awaitable[None]]


async def invoke(
    tool: Tool[Any],
    params: Params | BaseModel,
    ctx: ToolContext,
    *,
    time_limit: float | None = None,
    sleep: Sleep = anyio.sleep,
) -> Outcome:
    """Run ``tool`` once, or up to three times when it is retry-safe and the OS said 'busy'.

    Cancellation is not caught here: the caller's cancel scope decides what a
    cancelled call is reported as.
    """
    started = time.time()
    attempts = 0
    status, output, error = Status.ERROR, "", None
    metadata: dict[str, Any] = {}
    so_far = progress.OutputSoFar()  # a call that times out keeps what it printed
    token = progress.current.set(so_far)
    try:
        with anyio.fail_after(time_limit) if time_limit is not None else _NO_LIMIT:
            while True:
                attempts += 1
                try:
                    result: ToolOutput = await tool.run(params, ctx)
                except ToolTimeoutError as exc:
                    status, output, error = Status.TIMEOUT, so_far.text(), str(exc)
                except ToolError as exc:
                    status, error = Status.ERROR, str(exc)
                except OSError as exc:
                    transient = exc.errno in TRANSIENT_ERRNOS
                    if transient and tool.is_retry_safe and attempts <= len(BACKOFF_S):
                        await sleep(BACKOFF_S[attempts - 1])  # cancellable
                        continue
                    status, error = Status.ERROR, _os_message(exc)
                except Exception as exc:  # noqa: BLE001 - a tool's bug is that call's result
                    # (a plugin raising ValueError must not take its siblings' results down)
                    status = Status.ERROR
                    error = f"internal error in {tool.name}: {type(exc).__name__}: {exc}"
                else:
                    status, output, error, metadata = _completed(result)
                break
    except TimeoutError:
        status, error = Status.TIMEOUT, f"timed out after {time_limit:g} s"
        output = so_far.text()
    finally:
        progress.current.reset(token)
    return Outcome(status, output, error, attempts, started, time.time(), metadata)


RunNow = Callable[["Params | BaseModel", ToolContext], ToolOutput | None]


def invoke_now(
    tool: Tool[Any], run_now: RunNow, params: Params | BaseModel, ctx: ToolContext
) -> Outcome | None:
    """:func:`invoke` for a call its tool completes at once (``run_now``: a tool's
    synchronous form of ``run``, which returns None when it has to be awaited after all).

    The same outcome as :func:`invoke`, or None when the call must go through it: the
    tool said so, or the OS said 'busy' to a retry-safe tool (the retries wait).
    """
    started = time.time()
    status, output, error = Status.ERROR, "", None
    metadata: dict[str, Any] = {}
    try:
        result = run_now(params, ctx)
    except ToolTimeoutError as exc:
        status, error = Status.TIMEOUT, str(exc)
    except ToolError as exc:
        status, error = Status.ERROR, str(exc)
    except OSError as exc:
        if exc.errno in TRANSIENT_ERRNOS and tool.is_retry_safe:
            return None
        status, error = Status.ERROR, _os_message(exc)
    except Exception as exc:  # noqa: BLE001 - as in invoke
        status = Status.ERROR
        error = f"internal error in {tool.name}: {type(exc).__name__}: {exc}"
    else:
        if result is None:
            return None
        status, output, error, metadata = _completed(result)
    return Outcome(status, output, error, 1, started, time.time(), metadata)


def _completed(result: ToolOutput) -> tuple[Status, str, str | None, dict[str, Any]]:
    """A tool's output as (status, output, error, metadata)."""
    metadata = dict(result.metadata)
    if not result.is_error:
        return Status.OK, result.output, None, metadata
    code = metadata.get("exit_code")
    error = (
        f"exit code {code}"
        if code is not None
        else _first_line(result.output) or "the tool reported an error"
    )
    return Status.ERROR, result.output, error, metadata


def _os_message(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    where = f": {exc.filename}" if exc.filename else ""
    if exc.errno == errno.EAGAIN and exc.filename:
        # what starting a program says when no process may be made
        where += " (no process could be started: is the limit of processes, ulimit -u, reached?)"
    return f"{name + ': ' if name else ''}{text}{where}"


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""
