"""Small real tools for driving the executor deterministically.

They implement the Tool protocol like any plugin would; Bash, Read, Write are
the real built-ins.
"""

from __future__ import annotations

import errno
import time
from pathlib import Path

import anyio
import pytest
from pydantic import Field

from toolrun.errors import ToolError
from toolrun.tools import ToolRegistry
from toolrun.tools.base import BaseTool, ToolContext, ToolInput, ToolKind, ToolOutput


class SleepInput(ToolInput):
    seconds: float = 0.0
    tag: str = ""
    fail: bool = False


class Tracker:
    """Records how many calls run at once."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self.started: list[str] = []
        self.finished: list[str] = []
        self.times: dict[str, tuple[float, float]] = {}


class SleepTool(BaseTool[SleepInput]):
    """Concurrency-safe; sleeps, then reports its tag."""

    name = "Sleep"
    kind = ToolKind.READ
    input_model = SleepInput
    concurrency = "always"

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    def is_concurrency_safe(self, input: SleepInput, ctx: ToolContext | None = None) -> bool:
        return True

    async def run(self, input: SleepInput, ctx: ToolContext) -> ToolOutput:
        t = self.tracker
        t.running += 1
        t.peak = max(t.peak, t.running)
        t.started.append(input.tag)
        start = time.monotonic()
        try:
            await anyio.sleep(input.seconds)
        finally:
            t.running -= 1
        t.finished.append(input.tag)
        t.times[input.tag] = (start, time.monotonic())
        if input.fail:
            raise ToolError(f"{input.tag} failed")
        return ToolOutput(f"slept {input.tag}")


class FlakyInput(ToolInput):
    failures: int = Field(default=0, ge=0)
    code: str = "EBUSY"


class FlakyTool(BaseTool[FlakyInput]):
    """Raises an OSError ``failures`` times, then succeeds. Retry-safe unless told otherwise."""

    name = "Flaky"
    kind = ToolKind.READ
    input_model = FlakyInput

    def __init__(self, retry_safe: bool = True) -> None:
        self.calls = 0
        self.is_retry_safe = retry_safe

    async def run(self, input: FlakyInput, ctx: ToolContext) -> ToolOutput:
        self.calls += 1
        if self.calls <= input.failures:
            code = getattr(errno, input.code)
            raise OSError(code, f"injected {input.code}", "/tmp/x")
        return ToolOutput(f"ok after {self.calls}")


@pytest.fixture
def tracker() -> Tracker:
    return Tracker()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def registry(tracker: Tracker) -> ToolRegistry:
    """The built-in tools (Bash, Read, Write, ...) and a Sleep tool that tracks its calls."""
    from toolrun.tools import default_registry

    reg = default_registry(plugins=False)
    reg.register(SleepTool(tracker), source="test")
    return reg
