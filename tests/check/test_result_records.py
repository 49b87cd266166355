"""check's result records are exec's (design §6), written out without building Results."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolrun.errors import Location
from toolrun.execution.results import DecidedBy, Result, Status
from toolrun.report.models import CallCheck, PlanCheck
from toolrun.report.records import result_json, result_lines


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
        runs_in=c.runs_in,
        runs_in_why=c.runs_in_why,
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
        {"tool": "Bash", "input": {"command": "ls"}, "decision": "allow", "status": "skipped",
         "error": None, "runs_in": "read-only jail",
         "runs_in_why": "allowed on toolrun's judgement (the read-only set)"},
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


# -- the template that writes the records of a JSON report ---------------------------------

_text = st.text(max_size=12)
_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _text)
_input = st.dictionaries(
    _text, st.recursive(_scalar, lambda v: st.lists(v, max_size=3) | st.dictionaries(
        _text, v, max_size=3), max_leaves=6), max_size=4
)
_maybe = st.one_of(st.none(), _text)
_int = st.integers(min_value=0, max_value=10**9)


@settings(max_examples=400, deadline=None)
@given(
    position=st.one_of(_int, st.booleans()),
    id=_text, tool=_text, input=_input, decision=_text, kind=_text, rule=_maybe,
    source=_maybe, reason=_text, status=_text, error=_maybe, line=_int, column=_int,
    turn=_int, run=_int, run_kind=_text, execution_id=_text,
    hooks=st.sampled_from([(), ({"event": "PreToolUse", "decision": None},)]),
    rebased=st.sampled_from([(), (("cwd", "/a", "/b"),)]),
    origin=st.sampled_from(["", "sidechain"]), file=st.sampled_from(["", "other.yaml", "é\"x"]),
    runs_in=_maybe, runs_in_why=_maybe, plan_file=_text, run_id=_text,
)  # fmt: skip
def test_a_record_written_from_the_template_is_the_general_encoding(
    plan_file: str, run_id: str, **fields: Any
) -> None:
    import json

    plan = PlanCheck(plan_file)
    c = CallCheck(**fields)
    general = json.dumps(result_json(run_id, plan, c), ensure_ascii=False)
    assert result_lines(run_id, plan)(c) == general


def test_the_template_writes_the_usual_record_and_falls_back_for_a_str_subclass() -> None:
    import json

    class Name(str):
        pass

    plan = PlanCheck("plans/a.yaml")
    line = result_lines("run_1", plan)
    for c in (call(), call(line=0, rule=None, error=None), call(tool=Name("Edit"))):
        assert line(c) == json.dumps(result_json("run_1", plan, c), ensure_ascii=False)
        assert json.loads(line(c)) == result_json("run_1", plan, c)
