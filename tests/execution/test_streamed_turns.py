"""A turn's calls start while its later calls are still analysed and decided: the same
runs, decisions and results as the turn partitioned and decided up front."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrun.execution.executor import ExecSettings, Executor, runs_as_they_come
from toolrun.execution.partition import Run, partition
from toolrun.execution.results import CallDecision, DecidedBy, Result
from toolrun.plan.models import Call, Plan
from toolrun.tools import ToolRegistry
from toolrun.tools.base import ToolContext, ToolKind

from .conftest import SleepInput, SleepTool, Tracker
from .test_executor import make_plan

pytestmark = pytest.mark.anyio


@pytest.fixture
def tools() -> ToolRegistry:
    from toolrun.tools import default_registry

    return default_registry(plugins=False)


# -- the runs, call by call -------------------------------------------------------------------

# each call: (safe: True/False/None = raises, ends its run: True/False/None = raises)
_verdict = st.sampled_from([True, False, None])


def _grouped(calls: list[Any], is_safe: Any, ends: Any) -> list[Run[Any]]:
    runs = runs_as_they_come(calls, is_safe, ends)
    out: list[Run[Any]] = []
    for kind, first in runs:
        members = (first,) if kind == "exclusive" else tuple(runs.this_run(first))
        out.append(Run(kind, members))
    return out


@given(st.lists(st.tuples(_verdict, _verdict), max_size=30))
def test_runs_as_they_come_are_partitions_runs(
    flags: list[tuple[bool | None, bool | None]],
) -> None:
    calls = list(range(len(flags)))

    def answer(value: bool | None) -> bool:
        if value is None:
            raise ValueError("cannot tell")
        return value

    def is_safe(i: int) -> bool:
        return answer(flags[i][0])

    def ends(i: int) -> bool:
        return answer(flags[i][1])

    assert _grouped(calls, is_safe, ends) == partition(calls, is_safe, ends)  # type: ignore[arg-type]


def test_the_rest_is_what_no_run_took() -> None:
    runs = runs_as_they_come([1, 2, 3, 4], lambda c: c != 2, lambda c: False)  # type: ignore[arg-type, arg-type, return-value]
    assert next(runs) == ("concurrent", 1)
    assert list(runs.rest()) == [2, 3, 4]
    assert list(runs) == []


# -- the same results as decided up front --------------------------------------------------------


class WordDecider:
    """Denies a command with "nope" in it, asks for one with "maybe", allows the rest."""

    def decide(self, call: Call, cwd: Path, hooks: object = None) -> CallDecision:
        command = str(call.input.get("command", ""))
        if "nope" in command:
            return CallDecision("deny", "denied: nope", DecidedBy("rule", "Bash(nope)", "t:1"))
        if "maybe" in command:
            return CallDecision("ask", "needs approval: maybe", DecidedBy("rule", "x", "t:2"))
        return CallDecision("allow", "fine", DecidedBy("rule", "Bash", "t:3"))


def _executor(
    registry: ToolRegistry, workspace: Path, *, up_front: bool, **settings: Any
) -> Executor:
    return Executor(
        workspace=workspace,
        registry=registry,
        decider=WordDecider(),
        settings=ExecSettings(**settings),
        run_id="run-test",
        # a sink told of each whole run makes the executor partition the turn up front
        on_run=(lambda plan, run: None) if up_front else None,
    )


def _essence(results: list[Result]) -> list[tuple[Any, ...]]:
    return [
        (
            r.index,
            r.status,
            r.output,
            r.error,
            r.decision,
            r.decided_by,
            r.metadata.get("cwd"),
            r.metadata.get("exit_code"),
            r.aborted_before_launch,
        )
        for r in results
    ]


@pytest.mark.parametrize("ask_default", ["deny", "allow"])
async def test_a_streamed_turn_gives_what_the_turn_decided_up_front_gives(
    tools: ToolRegistry, workspace: Path, ask_default: str
) -> None:
    (workspace / "sub").mkdir()
    (workspace / "f.txt").write_text("hello\n")
    commands = [
        "echo one",
        "cat f.txt",
        "echo nope",
        "echo maybe",
        "pwd",
        "cd sub",
        "pwd",
        "echo two > made.txt",
        "ls",
        "echo maybe again",
        "false",
        "cat missing.txt",
        "cd ..",
        "pwd",
        "echo nope again",
        "echo three",
        *[f"echo n{i}" for i in range(20)],
    ]
    calls = [("Bash", {"command": c}) for c in commands]
    found = []
    for up_front in (True, False):
        for name in ("sub/made.txt", "made.txt"):
            (workspace / name).unlink(missing_ok=True)
        plan = make_plan(tools, [calls, calls[:8]])
        ex = _executor(
            tools, workspace, up_front=up_front, ask_default=ask_default, max_concurrency=3
        )
        (results,) = await ex.run([plan])
        found.append(_essence(results))
    assert found[0] == found[1]
    assert len(found[0]) == len(commands) + 8


# -- the first calls start before the last is analysed ---------------------------------------


class Noted(SleepTool):
    """A Sleep whose analysis and start are noted, in the order they happen; it runs
    like a command (reads run at once, in this process, and are not streamed)."""

    kind = ToolKind.EXECUTE

    def __init__(self, tracker: Tracker, events: list[str]) -> None:
        super().__init__(tracker)
        self.events = events

    def is_concurrency_safe(self, input: SleepInput, ctx: ToolContext | None = None) -> bool:
        self.events.append(f"analysed {input.tag}")
        time.sleep(0.0005)  # an analysis that takes a while, like a long Bash command's
        return True

    async def run(self, input: SleepInput, ctx: ToolContext) -> Any:
        self.events.append(f"ran {input.tag}")
        return await super().run(input, ctx)


async def test_the_first_calls_start_while_later_ones_are_analysed(
    tools: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    events: list[str] = []
    registry = tools
    registry.register(Noted(tracker, events), source="test")
    n = 200
    plan: Plan = make_plan(
        registry, [[("Sleep", {"seconds": 0.001, "tag": f"s{i}"}) for i in range(n)]]
    )
    ex = _executor(registry, workspace, up_front=False, max_concurrency=4, max_calls_per_turn=n)
    (results,) = await ex.run([plan])
    assert [r.index for r in results] == list(range(n))
    assert events.index("ran s0") < events.index(f"analysed s{n - 1}")
    # up front (a sink that wants each run whole): every call is analysed first
    events.clear()
    (again,) = await _executor(
        registry, workspace, up_front=True, max_concurrency=4, max_calls_per_turn=n
    ).run([plan])
    assert events.index("ran s0") > events.index(f"analysed s{n - 1}")
    assert [r.output for r in again] == [r.output for r in results]


# -- never more commands alive than the limit -------------------------------------------------


def _alive(marker: str) -> int:
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


async def test_never_more_bash_commands_alive_than_the_limit(
    tools: ToolRegistry, workspace: Path
) -> None:
    marker = f"0.0{os.getpid() % 1000:03d}7"  # a sleep time no other test's command has
    n, limit = 60, 3
    plan = make_plan(tools, [[("Bash", {"command": f"sleep {marker}"}) for _ in range(n)]])
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
            (results,) = await _executor(
                tools, workspace, up_front=False, max_concurrency=limit
            ).run([plan])
    finally:
        stop.set()
        watcher.join()
    assert [r.status.value for r in results] == ["ok"] * n
    assert 1 <= peak <= limit
