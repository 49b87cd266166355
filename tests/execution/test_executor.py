from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolrun.errors import Location
from toolrun.execution.executor import AskAnswer, ExecSettings, Executor
from toolrun.execution.results import CallDecision, DecidedBy, Result, Status
from toolrun.plan.models import Call, Plan, Turn
from toolrun.tools import ToolRegistry

from .conftest import Tracker

pytestmark = pytest.mark.anyio


class TableDecider:
    """Decides by tool name (and tag), like a rule table would."""

    def __init__(self, table: Mapping[str, str] | None = None) -> None:
        self.table = dict(table or {})
        self.seen: list[str] = []

    def decide(self, call: Call, cwd: Path, hooks: object = None) -> CallDecision:
        self.seen.append(call.id)
        key = str(call.input.get("tag", call.tool))
        decision = self.table.get(key, self.table.get(call.tool, "allow"))
        return CallDecision(
            decision, f"table says {decision}", DecidedBy("rule", f"{call.tool}", "t.yaml:1")
        )


def make_plan(
    registry: ToolRegistry, turns: list[list[tuple[str, dict[str, Any]]]], file: str = "p.yaml"
) -> Plan:
    built: list[Turn] = []
    index = 0
    for t, calls in enumerate(turns):
        out = []
        for tool_name, raw in calls:
            tool = registry.get(tool_name)
            assert tool is not None
            out.append(
                Call(
                    index,
                    t,
                    f"call-{index + 1}",
                    tool_name,
                    raw,
                    tool.input_model.model_validate(raw),
                    raw.get("_timeout"),
                    Location(file, index + 1, 1),
                )
                if "_timeout" not in raw
                else Call(
                    index,
                    t,
                    f"call-{index + 1}",
                    tool_name,
                    raw,
                    tool.input_model.model_validate(
                        {k: v for k, v in raw.items() if k != "_timeout"}
                    ),
                    raw["_timeout"],
                    Location(file, index + 1, 1),
                )
            )
            index += 1
        built.append(Turn(t, tuple(out), Location(file, 1, 1)))
    return Plan(file, None, tuple(built))


def executor(
    registry: ToolRegistry,
    workspace: Path,
    decider: Any = None,
    sink: list[Result] | None = None,
    **settings: Any,
) -> Executor:
    return Executor(
        workspace=workspace,
        registry=registry,
        decider=decider or TableDecider(),
        settings=ExecSettings(**settings),
        run_id="run-test",
        on_result=(sink.append if sink is not None else None),
    )


async def run_interrupted(ex: Executor, plan: Plan, after: float) -> list[Result]:
    """The results of ``plan`` run by ``ex``, interrupted ``after`` seconds in."""

    async def interrupt_soon() -> None:
        await anyio.sleep(after)
        ex.interrupt()

    with anyio.fail_after(3):
        async with anyio.create_task_group() as tg:
            tg.start_soon(interrupt_soon)
            (results,) = await ex.run([plan])
    return results


def sleeps(n: int, seconds: float = 0.0) -> list[tuple[str, dict[str, Any]]]:
    return [("Sleep", {"seconds": seconds, "tag": f"s{i}"}) for i in range(n)]


async def test_one_result_per_call_in_plan_order(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(
        registry,
        [[("Sleep", {"seconds": 0.05, "tag": "slow"}), ("Sleep", {"seconds": 0, "tag": "fast"})]],
    )
    sink: list[Result] = []
    (results,) = await executor(registry, workspace, sink=sink).run([plan])
    assert [r.index for r in sink] == [0, 1]
    assert tracker.finished == ["fast", "slow"]  # they ran concurrently
    r = results[0]
    assert r.status is Status.OK and r.output == "slept slow"
    assert r.execution_id.startswith("exec_") and r.run_id == "run-test"
    assert r.started_at is not None and r.finished_at is not None and r.finished_at >= r.started_at
    assert r.duration_ms >= 40 and r.attempts == 1
    assert r.location == Location("p.yaml", 1, 1)
    assert len({x.execution_id for x in results}) == 2


async def test_result_is_delivered_while_a_later_call_still_runs(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(
        registry,
        [
            [("Sleep", {"seconds": 0, "tag": "first"})],
            [("Sleep", {"seconds": 0.3, "tag": "second"})],
        ],
    )
    delivered: list[tuple[int, float, list[str]]] = []

    def sink(result: Result) -> None:
        delivered.append((result.index, time.monotonic(), list(tracker.finished)))

    ex = Executor(
        workspace=workspace,
        registry=registry,
        decider=TableDecider(),
        settings=ExecSettings(),
        run_id="r",
        on_result=sink,
    )
    await ex.run([plan])
    assert delivered[0][0] == 0
    assert "second" not in delivered[0][2]  # result 1 was out before call 2 finished
    assert delivered[0][1] < tracker.times["second"][1]


async def test_global_limit_caps_calls_in_flight(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(registry, [sleeps(12, 0.02)])
    (results,) = await executor(registry, workspace, max_concurrency=3).run([plan])
    assert tracker.peak == 3
    assert all(r.status is Status.OK for r in results)
    assert any(r.wait_ms > 10 for r in results)  # some calls queued


async def test_kind_limit(registry: ToolRegistry, workspace: Path, tracker: Tracker) -> None:
    plan = make_plan(registry, [sleeps(6, 0.02)])
    await executor(registry, workspace, kind_limits={"read": 2}).run([plan])
    assert tracker.peak == 2


async def test_calls_beyond_the_turn_limit_get_a_turn_limit_error(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(registry, [sleeps(5)])
    (results,) = await executor(registry, workspace, max_calls_per_turn=3).run([plan])
    assert [r.status for r in results] == [Status.OK] * 3 + [Status.ERROR] * 2
    assert results[3].error is not None and results[3].error.startswith(
        "turn_limit: a turn admits at most 3 calls"
    )
    assert results[3].aborted_before_launch
    assert len(tracker.started) == 3


async def test_denied_calls_never_run_and_name_the_rule(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(registry, [[("Sleep", {"tag": "a"}), ("Sleep", {"tag": "b"})]])
    (results,) = await executor(registry, workspace, TableDecider({"b": "deny"})).run([plan])
    assert [r.status for r in results] == [Status.OK, Status.DENIED]
    assert results[1].error == "denied: table says deny"
    assert results[1].decided_by == DecidedBy("rule", "Sleep", "t.yaml:1")
    assert tracker.started == ["a"]


async def test_asks_without_a_terminal_follow_ask_default(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(registry, [[("Sleep", {"tag": "a"})]])
    (denied,) = await executor(registry, workspace, TableDecider({"a": "ask"})).run([plan])
    assert denied[0].status is Status.NEEDS_APPROVAL and denied[0].decision == "ask"
    assert denied[0].error == "table says ask; no terminal to ask (use --ask allow to approve)"
    (allowed,) = await executor(
        registry, workspace, TableDecider({"a": "ask"}), ask_default="allow"
    ).run([plan])
    assert allowed[0].status is Status.OK and allowed[0].decided_by.kind == "flag"


async def test_asks_are_resolved_one_at_a_time_in_plan_order_before_the_run(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(
        registry,
        [
            [
                ("Sleep", {"tag": "a"}),
                ("Sleep", {"tag": "b"}),
                ("Sleep", {"tag": "c"}),
                ("Sleep", {"tag": "d"}),
            ]
        ],
    )
    asked: list[str] = []
    answers: dict[str, AskAnswer] = {"b": "no", "c": "yes", "d": "yes"}

    async def ask(call: Call, decision: CallDecision) -> AskAnswer:
        asked.append(call.id)
        assert tracker.started == []  # nothing of the run starts while a prompt is pending
        await anyio.sleep(0.01)
        return answers[str(call.input["tag"])]

    ex = Executor(
        workspace=workspace,
        registry=registry,
        decider=TableDecider({"b": "ask", "c": "ask", "d": "ask"}),
        settings=ExecSettings(),
        run_id="r",
        ask=ask,
    )
    (results,) = await ex.run([plan])
    assert asked == ["call-2", "call-3", "call-4"]
    assert [r.status for r in results] == [Status.OK, Status.DENIED, Status.OK, Status.OK]
    assert results[1].error == "denied by the user"
    assert results[2].decided_by == DecidedBy("user", "yes")


async def test_always_without_a_suggested_rule_approves_only_the_call_asked_about(
    registry: ToolRegistry, workspace: Path
) -> None:
    """The old "always" approved every later call of the same tool; now it adds the
    decider's suggested rule, and a decider that suggests none gets a plain yes."""
    plan = make_plan(registry, [[("Sleep", {"tag": "a"})], [("Sleep", {"tag": "b"})]])
    asked: list[str] = []

    async def ask(call: Call, decision: CallDecision) -> AskAnswer:
        asked.append(call.id)
        return "always"

    ex = Executor(
        workspace=workspace,
        registry=registry,
        decider=TableDecider({"Sleep": "ask"}),
        settings=ExecSettings(),
        run_id="r",
        ask=ask,
    )
    (results,) = await ex.run([plan])
    assert asked == ["call-1", "call-2"]
    assert [r.status for r in results] == [Status.OK, Status.OK]
    assert [r.decided_by for r in results] == [DecidedBy("user", "yes")] * 2


class ProtectedDecider(TableDecider):
    def decide(self, call: Call, cwd: Path, hooks: object = None) -> CallDecision:
        decision = super().decide(call, cwd, hooks)
        return CallDecision(
            decision.decision, decision.reason, decision.decided_by, protected="rm of /: critical"
        )


async def test_ask_allow_never_approves_a_protected_or_critical_path(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(registry, [[("Sleep", {"tag": "a"})]])
    (results,) = await executor(
        registry, workspace, ProtectedDecider({"a": "ask"}), ask_default="allow"
    ).run([plan])
    assert (results[0].status, results[0].decision) == (Status.NEEDS_APPROVAL, "ask")
    assert results[0].error is not None and "--ask allow never approves" in results[0].error
    assert "use --ask allow" not in results[0].error
    assert tracker.started == []


async def test_dry_run_decides_but_executes_nothing(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(
        registry, [[("Sleep", {"tag": "a"}), ("Sleep", {"tag": "b"}), ("Sleep", {"tag": "c"})]]
    )
    (results,) = await executor(
        registry, workspace, TableDecider({"b": "deny", "c": "ask"}), dry_run=True
    ).run([plan])
    assert [(r.status, r.decision) for r in results] == [
        (Status.SKIPPED, "allow"),
        (Status.DENIED, "deny"),
        (Status.SKIPPED, "ask"),
    ]
    assert tracker.started == []


async def test_a_decider_that_crashes_denies(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    class Broken:
        def decide(self, call: Call, cwd: Path, hooks: object = None) -> CallDecision:
            raise RuntimeError("boom")

    plan = make_plan(registry, [[("Sleep", {"tag": "a"})]])
    (results,) = await executor(registry, workspace, Broken()).run([plan])
    assert results[0].status is Status.DENIED
    assert results[0].error == "denied: the permission check failed: RuntimeError: boom"
    assert tracker.started == []


async def test_interrupt_marks_running_and_queued_calls(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(registry, [sleeps(4, 5.0), sleeps(2)])
    results = await run_interrupted(executor(registry, workspace, max_concurrency=2), plan, 0.1)
    assert len(results) == 6
    assert all(r.status is Status.INTERRUPTED for r in results)
    started = [r for r in results if not r.aborted_before_launch]
    queued = [r for r in results if r.aborted_before_launch]
    assert len(started) == 2 and len(queued) == 4
    assert started[0].error == "interrupted after the call started; it may have had side effects"
    assert queued[-1].error == "interrupted before the call started"


async def test_sibling_abort_on_bash_error_is_off_by_default(
    registry: ToolRegistry, workspace: Path
) -> None:
    plan = make_plan(
        registry, [[("Bash", {"command": "exit 3"}), ("Sleep", {"seconds": 0.2, "tag": "x"})]]
    )
    (results,) = await executor(registry, workspace).run([plan])
    # exit 3 is not read-only -> Bash runs alone; the Sleep is unaffected either way
    assert [r.status for r in results] == [Status.ERROR, Status.OK]
    assert results[0].error == "exit code 3"


async def test_parallel_runs_of_several_plans_share_fairly(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    a = make_plan(
        registry, [[("Sleep", {"seconds": 0.03, "tag": f"a{i}"}) for i in range(6)]], file="a.yaml"
    )
    b = make_plan(
        registry, [[("Sleep", {"seconds": 0.03, "tag": f"b{i}"}) for i in range(6)]], file="b.yaml"
    )
    ra, rb = await executor(registry, workspace, max_concurrency=4, jobs=2).run([a, b])
    assert len(ra) == len(rb) == 6
    assert tracker.peak <= 4
    # both plans progress together: each got calls into the first four starts
    first = tracker.started[:4]
    assert sum(t.startswith("a") for t in first) == 2
    assert sum(t.startswith("b") for t in first) == 2


async def test_sibling_abort_on_bash_error_cancels_the_rest_of_the_run(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    # `ls` of a missing path is read-only, so it shares a concurrent run with the sleeps
    turn = [
        ("Sleep", {"seconds": 2, "tag": "long"}),
        ("Bash", {"command": "ls no-such-dir"}),
        ("Sleep", {"seconds": 2, "tag": "queued"}),
    ]
    plan = make_plan(registry, [turn])
    with anyio.fail_after(5):
        (results,) = await executor(
            registry, workspace, sibling_abort_on_bash_error=True, max_concurrency=2
        ).run([plan])
    assert [r.status for r in results] == [Status.CANCELLED, Status.ERROR, Status.CANCELLED]
    why = "Cancelled: parallel tool call Bash(ls no-such-dir) errored"
    assert results[0].error == f"{why} after the call started; it may have had side effects"
    assert results[2].error == f"{why} before the call started"
    assert results[2].aborted_before_launch and not results[0].aborted_before_launch
    # and off (the default), a failing Bash call leaves its siblings alone
    (calm,) = await executor(registry, workspace, max_concurrency=3).run(
        [
            make_plan(
                registry,
                [
                    [
                        ("Sleep", {"seconds": 0.05, "tag": "a"}),
                        ("Bash", {"command": "ls no-such-dir"}),
                    ]
                ],
            )
        ]
    )
    assert [r.status for r in calm] == [Status.OK, Status.ERROR]


async def test_a_tick_of_results_is_journalled_in_one_write_then_shown_and_flushed_once(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    from toolrun.execution.journal import Journal

    plan = make_plan(registry, [sleeps(8)])  # quick calls: their results come in one tick
    events: list[str] = []
    journal = Journal(workspace / "j.jsonl")

    def show(result: Result) -> None:
        # what is shown is already in the journal
        assert result.execution_id in (workspace / "j.jsonl").read_text()
        events.append(f"show {result.index}")

    ex = executor(registry, workspace)
    ex.journal, ex.on_result, ex.on_flush = journal, show, lambda: events.append("flush")
    with journal:
        await ex.run([plan])
    shown = [e for e in events if e != "flush"]
    assert shown == [f"show {i}" for i in range(8)]
    assert events[-1] == "flush" and events.count("flush") < 8  # once per tick, not per result


async def test_a_sink_that_raises_fails_the_run_after_every_call_ran(
    registry: ToolRegistry, workspace: Path, tracker: Tracker
) -> None:
    plan = make_plan(registry, [sleeps(3)])

    def broken(result: Result) -> None:
        raise ValueError("sink broke")

    ex = executor(registry, workspace)
    ex.on_result = broken
    with pytest.raises(ValueError, match="sink broke"):
        await ex.run([plan])
    assert len(tracker.finished) == 3
