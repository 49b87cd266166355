"""Never more commands alive than the concurrency limit, counted from the process table
while real Bash calls run."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import anyio
import pytest

from toolrun.execution.executor import ExecSettings, Executor
from toolrun.tools import ToolRegistry

from .test_executor import TableDecider, make_plan

pytestmark = pytest.mark.anyio


@pytest.fixture
def tools() -> ToolRegistry:
    from toolrun.tools import default_registry

    return default_registry(plugins=False)


def _alive(marker: str) -> int:
    """Processes whose command line holds ``marker``."""
    count = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    count += 1
        except OSError:
            continue
    return count


@pytest.mark.parametrize("limit", [1, 3])
async def test_never_more_bash_commands_alive_than_the_limit(
    tools: ToolRegistry, workspace: Path, limit: int
) -> None:
    marker = f"0.1{os.getpid() % 1000:03d}{limit}7"  # a sleep no other test's command has
    n = 12
    command = f"sleep {marker}"  # read-only: the calls run side by side
    plan = make_plan(tools, [[("Bash", {"command": command}) for _ in range(n)]])
    peak = 0
    stop = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _alive(marker))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with anyio.fail_after(60):
            (results,) = await Executor(
                workspace=workspace,
                registry=tools,
                decider=TableDecider(),
                settings=ExecSettings(max_concurrency=limit, max_calls_per_turn=n),
                run_id="run-test",
            ).run([plan])
    finally:
        stop.set()
        watcher.join()
    assert [r.status.value for r in results] == ["ok"] * n
    assert 1 <= peak <= limit
    assert _alive(marker) == 0  # nothing outlived its call
