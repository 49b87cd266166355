"""A concurrent run whose calls nothing can hold back (no prompt, no hook) starts its first
calls while the rest are still being grouped and decided; every result is the one the
run decided whole first would give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolrun.execution.executor import AskAnswer, ExecSettings, Executor
from toolrun.execution.results import CallDecision, DecidedBy, Result, Status
from toolrun.plan.models import Call
from toolrun.tools import ToolRegistry

from .conftest import Tracker
from .test_executor import TableDecider, make_plan, run_interrupted, sleeps

pytestmark = pytest.mark.anyio


class LoggingDecider(TableDecider):
    """A table decider that logs each decision in the tracker's log of starts."""

    def __init__(self, tracker: Tracker, table: dict[str, str] | None = None) -> None:
        super().__init__(table)
        self.tracker = tracker

    def decide(self, call: Call, cwd: Path, hooks: object = None) -> CallDecision:
        self.tracker.started.append(f"decided {call.id}")
        return super().decide(call, cwd, hooks)


def _executor(
    registry: ToolRegistry, workspace: Path, decider: Any, **settings: Any
) -> Executor:
    return Executor(workspace=workspace, registry=registry, decider=decider,
                    settings=ExecSettings(**settings), run_id="r")  # fmt: skip


async def test_a_runs_first_call_starts_before_its_last_is_decided(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(registry, [sleeps(6, 0.01)])
    ex = _executor(registry, workspace, LoggingDecider(tracker), max_concurrency=2)
    (results,) = await ex.run([plan])
    assert [r.status for r in results] == [Status.OK] * 6
    log = tracker.started
    assert log.index("s0") < log.index("decided call-6")
    assert sorted(x for x in log if not x.startswith("decided")) == [f"s{i}" for i in range(6)]


async def test_with_a_prompt_possible_the_whole_run_is_decided_before_it_starts(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(registry, [sleeps(6, 0.01)])

    async def ask(call: Call, decision: CallDecision) -> AskAnswer:
        return "yes"

    ex = Executor(workspace=workspace, registry=registry, decider=LoggingDecider(tracker),
                  settings=ExecSettings(max_concurrency=2), run_id="r", ask=ask)  # fmt: skip
    await ex.run([plan])
    log = tracker.started
    assert log.index("decided call-6") < log.index("s0")


def _turns(workspace: Path) -> list[list[tuple[str, dict[str, Any]]]]:
    """Reads allowed, denied and asking; a write alone between them; a Bash ``cd`` that
    ends its run (the reads after it start in the new directory); a second turn."""
    (workspace / "sub").mkdir()
    return [
        [
            ("Sleep", {"tag": "a"}),
            ("Sleep", {"tag": "denied"}),
            ("Sleep", {"tag": "asks"}),
            ("Write", {"file_path": str(workspace / "f.txt"), "content": "x"}),
            ("Sleep", {"tag": "b"}),
            ("Bash", {"command": "cd sub"}),
            ("Bash", {"command": "pwd"}),
            ("Sleep", {"tag": "c", "fail": True}),
        ],
        [("Sleep", {"tag": "d"}), ("Write", {"file_path": "g.txt", "content": "y"})],
    ]


def _kept(results: list[Result]) -> list[tuple[Any, ...]]:
    """What a result says, less its times and ids."""
    return [
        (r.index, r.status, r.decision, r.decided_by, r.error, r.output,
         r.aborted_before_launch, r.attempts)
        for r in results
    ]  # fmt: skip


@pytest.mark.parametrize("ask_default", ["deny", "allow"])
async def test_started_as_decided_every_result_is_the_one_of_the_run_decided_whole(
    registry: ToolRegistry,
    workspace: Path,
    tracker: Tracker,
    monkeypatch: pytest.MonkeyPatch,
    ask_default: str,
) -> None:
    turns = _turns(workspace)
    table = {"denied": "deny", "asks": "ask"}
    streamed = _executor(registry, workspace, TableDecider(table), ask_default=ask_default)
    assert streamed._streams()
    (first,) = await streamed.run([make_plan(registry, turns)])
    # the same plan again, each run decided whole before it starts
    (workspace / "f.txt").unlink()
    (workspace / "g.txt").unlink()
    whole = _executor(registry, workspace, TableDecider(table), ask_default=ask_default)
    monkeypatch.setattr(whole, "_streams", lambda: False)
    (second,) = await whole.run([make_plan(registry, turns)])
    assert _kept(first) == _kept(second)
    by_status = [r.status for r in first]
    assert by_status[1] is Status.DENIED and by_status[7] is Status.ERROR
    assert by_status[2] is (Status.OK if ask_default == "allow" else Status.NEEDS_APPROVAL)
    assert first[6].output.strip() == str(workspace / "sub")  # after the cd
    assert (workspace / "g.txt").read_text() == "y"


async def test_calls_not_reached_when_interrupted_are_interrupted_before_they_start(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(registry, [[*sleeps(12, 5.0), ("Write", {"file_path": "w", "content": ""}),
                                 *sleeps(2)]])  # fmt: skip
    ex = _executor(registry, workspace, LoggingDecider(tracker), max_concurrency=2)
    results = await run_interrupted(ex, plan, 0.2)
    assert [r.index for r in results] == list(range(15))
    assert all(r.status is Status.INTERRUPTED for r in results)
    assert [r.aborted_before_launch for r in results] == [False, False] + [True] * 13
    # the calls decided ahead of the workers keep their decision; the rest were never
    # decided, and say so
    decided = {int(x.split("-")[1]) - 1 for x in tracker.started if x.startswith("decided")}
    assert 2 <= len(decided) < 12
    for r in results[2:]:
        assert r.decided_by == (DecidedBy("rule", "Sleep", "t.yaml:1") if r.index in decided
                                else DecidedBy("interrupt"))  # fmt: skip
    assert not (workspace / "w").exists()
