"""Every call of a run is decided before any of the run starts, with or without a prompt
possible: starting a run's first calls while the rest were decided (tried: their first
command 57 ms sooner for 1000 read-only calls) made the whole run no faster, and 2-3%
slower, on two cores (decisions between launches ran on cold caches)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.execution.executor import AskAnswer, ExecSettings, Executor
from toolrun.execution.results import CallDecision, Status
from toolrun.plan.models import Call
from toolrun.tools import ToolRegistry

from .conftest import Tracker
from .test_executor import TableDecider, make_plan, sleeps

pytestmark = pytest.mark.anyio


class LoggingDecider(TableDecider):
    """A table decider that logs each decision in the tracker's log of starts."""

    def __init__(self, tracker: Tracker, table: dict[str, str] | None = None) -> None:
        super().__init__(table)
        self.tracker = tracker

    def decide(self, call: Call, cwd: Path, hooks: object = None) -> CallDecision:
        self.tracker.started.append(f"decided {call.id}")
        return super().decide(call, cwd, hooks)


@pytest.mark.parametrize("prompt", [False, True])
async def test_a_run_is_decided_whole_before_any_of_it_starts(
    registry: ToolRegistry, workspace: Path, tracker: Tracker, prompt: bool
) -> None:
    plan = make_plan(registry, [sleeps(6, 0.01)])

    async def ask(call: Call, decision: CallDecision) -> AskAnswer:
        return "yes"

    ex = Executor(workspace=workspace, registry=registry, decider=LoggingDecider(tracker),
                  settings=ExecSettings(max_concurrency=2), run_id="r",
                  ask=ask if prompt else None)  # fmt: skip
    (results,) = await ex.run([plan])
    assert [r.status for r in results] == [Status.OK] * 6
    log = tracker.started
    assert log[:6] == [f"decided call-{i}" for i in range(1, 7)]
    assert sorted(log[6:]) == [f"s{i}" for i in range(6)]
