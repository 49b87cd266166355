from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from toolrun.execution.invocation import BACKOFF_S, invoke, invoke_now
from toolrun.execution.results import Status
from toolrun.tools.base import ToolContext, ToolOutput

from .conftest import FlakyInput, FlakyTool, SleepInput, SleepTool, Tracker

pytestmark = pytest.mark.anyio


class RecordingSleep:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


async def test_transient_errors_are_retried_twice_with_200_then_400_ms(workspace: Path) -> None:
    tool = FlakyTool()
    sleep = RecordingSleep()
    outcome = await invoke(
        tool, FlakyInput(failures=2), ToolContext.for_workspace(workspace), sleep=sleep
    )
    assert outcome.status is Status.OK
    assert outcome.attempts == 3
    assert sleep.waits == [0.2, 0.4] == list(BACKOFF_S)


@pytest.mark.parametrize("code", ["EBUSY", "EAGAIN", "EMFILE", "ENFILE"])
async def test_a_third_failure_is_final(workspace: Path, code: str) -> None:
    tool = FlakyTool()
    sleep = RecordingSleep()
    outcome = await invoke(
        tool, FlakyInput(failures=5, code=code), ToolContext.for_workspace(workspace), sleep=sleep
    )
    assert outcome.status is Status.ERROR
    assert outcome.attempts == 3
    assert tool.calls == 3
    # EAGAIN naming a file is what a failed process start says: the limit is named (#27)
    hint = " (no process could be started: is the limit of processes, ulimit -u, reached?)"
    assert outcome.error == f"{code}: injected {code}: /tmp/x" + (hint if code == "EAGAIN" else "")


async def test_other_errors_and_unsafe_tools_are_not_retried(workspace: Path) -> None:
    ctx = ToolContext.for_workspace(workspace)
    tool = FlakyTool()
    outcome = await invoke(tool, FlakyInput(failures=1, code="ENOENT"), ctx, sleep=RecordingSleep())
    assert (outcome.status, outcome.attempts) == (Status.ERROR, 1)
    unsafe = FlakyTool(retry_safe=False)
    outcome = await invoke(unsafe, FlakyInput(failures=1), ctx, sleep=RecordingSleep())
    assert (outcome.status, outcome.attempts, unsafe.calls) == (Status.ERROR, 1, 1)


async def test_a_tool_error_result_is_never_retried(workspace: Path) -> None:
    tracker = Tracker()
    outcome = await invoke(
        SleepTool(tracker), SleepInput(tag="x", fail=True), ToolContext.for_workspace(workspace)
    )
    assert (outcome.status, outcome.error, outcome.attempts) == (Status.ERROR, "x failed", 1)


async def test_the_backoff_wait_is_cancellable(workspace: Path) -> None:
    tool = FlakyTool()
    with anyio.move_on_after(0.1) as scope:
        await invoke(tool, FlakyInput(failures=5), ToolContext.for_workspace(workspace))
    assert scope.cancelled_caught
    assert tool.calls == 1  # cancelled during the 200 ms wait, no second attempt


async def test_timeout(workspace: Path) -> None:
    tracker = Tracker()
    outcome = await invoke(
        SleepTool(tracker),
        SleepInput(seconds=3600, tag="t"),
        ToolContext.for_workspace(workspace),
        time_limit=0.05,
    )
    assert outcome.status is Status.TIMEOUT
    assert outcome.error == "timed out after 0.05 s"
    # the call was stopped, not waited for: it started and never finished
    assert (tracker.started, tracker.finished, tracker.running) == (["t"], [], 0)


def test_errno_names_used_are_real() -> None:
    assert {errno.EBUSY, errno.EAGAIN, errno.EMFILE, errno.ENFILE}


async def test_a_tool_that_crashes_gives_an_error_result_not_a_crash(workspace: Path) -> None:
    class Broken(FlakyTool):
        async def run(self, input: FlakyInput, ctx: ToolContext) -> ToolOutput:
            raise ValueError("bad state")

    outcome = await invoke(Broken(), FlakyInput(), ToolContext.for_workspace(workspace))
    assert (outcome.status, outcome.attempts) == (Status.ERROR, 1)
    assert outcome.error == "internal error in Flaky: ValueError: bad state"


def _raising(code: int) -> Callable[[BaseModel, ToolContext], ToolOutput | None]:
    def run_now(params: BaseModel, ctx: ToolContext) -> ToolOutput | None:
        raise OSError(code, "injected", "/tmp/x")

    return run_now


def test_run_at_once_leaves_a_busy_retry_safe_call_to_invoke(workspace: Path) -> None:
    ctx = ToolContext.for_workspace(workspace)
    busy, gone = _raising(errno.EBUSY), _raising(errno.ENOENT)
    # retried only by invoke, whose back-off waits: nothing is reported here
    assert invoke_now(FlakyTool(), busy, FlakyInput(), ctx) is None
    done = invoke_now(FlakyTool(retry_safe=False), busy, FlakyInput(), ctx)
    assert done is not None and done.status is Status.ERROR and done.attempts == 1
    assert done.error == "EBUSY: injected: /tmp/x"
    lost = invoke_now(FlakyTool(), gone, FlakyInput(), ctx)
    assert lost is not None and lost.error == "ENOENT: injected: /tmp/x"


def test_run_at_once_reports_a_tool_error_output_as_invoke_does(workspace: Path) -> None:
    ctx = ToolContext.for_workspace(workspace)

    def failed(params: BaseModel, ctx: ToolContext) -> ToolOutput | None:
        return ToolOutput("\n  first line\nsecond", is_error=True)

    done = invoke_now(FlakyTool(), failed, FlakyInput(), ctx)
    assert done is not None and (done.status, done.error) == (Status.ERROR, "first line")
    assert invoke_now(FlakyTool(), lambda p, c: None, FlakyInput(), ctx) is None
