"""check's result records are exec's (design §6), written out without building Results."""

from __future__ import annotations

from typing import Any

import pytest

from toolrun.commands.check import CallCheck, PlanCheck, result_json
from toolrun.errors import Location
from toolrun.execution.results import DecidedBy, Result, Status


def call(**changes: Any) -> CallCheck:
    base = CallCheck(
        position=3,
        id="edit-1",
        tool="Edit",
        input={"file_path": "src/a.py", "old_string": "a", "new_string": "b"},
        decision="deny",
        kind="rule",
        rule="Edit(src/**)",
        source="toolrun.yaml:4",
        reason="denied: deny rule Edit(src/**) matches file_path src/a.py",
        status="denied",
        error="denied by rule",
        line=7,
        column=9,
        turn=2,
        run=3,
        run_kind="exclusive",
        execution_id="exec_0123",
    )
    return base._replace(**changes)


def as_exec_would(run_id: str, plan: PlanCheck, c: CallCheck) -> dict[str, Any]:
    """The record through exec's own Result.as_json, plus check's keys."""
    result = Result(
        index=c.position,
        id=c.id,
        execution_id=c.execution_id,
        run_id=run_id,
        plan=plan.file,
        tool=c.tool,
        input=c.input,
        decision=c.decision,
        decided_by=DecidedBy(c.kind, c.rule, c.source),
        status=Status(c.status),
        error=c.error,
        location=Location(c.file or plan.file, c.line, c.column) if c.line else None,
        hooks=c.hooks,
    )
    extra: dict[str, Any] = {"origin": c.origin} if c.origin else {}
    if c.rebased:
        extra["rebased"] = [{"field": f, "recorded": a, "rebased": b} for f, a, b in c.rebased]
    return {
        **result.as_json(),
        **extra,
        "reason": c.reason,
        "turn": c.turn,
        "run": c.run,
        "run_kind": c.run_kind,
    }


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"line": 0, "column": 0, "run": 0, "run_kind": "", "status": "error"},
        {"decision": "allow", "status": "skipped", "error": None, "rule": None, "source": None},
        {"hooks": ({"event": "PreToolUse", "runs": [{"command": "./guard", "exit": 0}]},)},
        {"origin": "subagent agent-1.jsonl", "file": "agent-1.jsonl"},
        {"rebased": (("cwd", "/home/dev/proj", "/ws"), ("file_path", "/home/dev/proj/a", "/ws/a"))},
    ],
)
def test_a_check_record_has_exactly_the_keys_and_values_of_an_exec_result(
    changes: dict[str, Any],
) -> None:
    plan = PlanCheck("plans/a.yaml")
    c = call(**changes)
    record = result_json("run_1", plan, c)
    expected = as_exec_would("run_1", plan, c)
    assert record == expected
    assert list(record) == list(expected)  # the same order too: reports are read by people
