"""The journal's records put together from their parts read exactly as the encoder writes
them: the same text, byte for byte, whatever the strings hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from toolrun.errors import Location
from toolrun.execution.executor import started_line, started_record
from toolrun.execution.results import encode_json
from toolrun.plan.models import Call

# text of every kind: quotes, backslashes, controls, non-ASCII, lone surrogates
text = st.text(st.characters(codec=None, exclude_categories=()), max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
stamps = st.floats(min_value=0, max_value=4e9, allow_nan=False)


class NoInput(BaseModel):
    pass


def a_call(index: int, call_id: Any, tool: Any, given_input: Any) -> Call:
    return Call(
        index=index,
        turn=0,
        id=call_id,
        tool=tool,
        input=given_input,
        params=NoInput(),
        timeout=None,
        location=Location("plan.json", 1, 1),
    )


@settings(max_examples=300, deadline=None)
@given(
    run_id=text,
    plan=text,
    index=st.integers(min_value=0, max_value=10**12),
    call_id=text,
    tool=text,
    given_input=st.dictionaries(text, json_values, max_size=4),
    execution_id=text,
    started=stamps,
)
def test_a_started_record_reads_as_the_encoder_writes_it(
    run_id: str,
    plan: str,
    index: int,
    call_id: str,
    tool: str,
    given_input: dict[str, Any],
    execution_id: str,
    started: float,
) -> None:
    call = a_call(index, call_id, tool, given_input)
    line = started_line(run_id, plan, call, execution_id, started)
    assert line == encode_json(started_record(run_id, plan, call, execution_id, started))
    assert json.loads(line)["input"] == json.loads(encode_json(given_input))


def test_ids_and_tools_of_other_types_take_the_encoder() -> None:
    # (a plugin's or a stream's odd values: the encoder's own words, not a guess)
    for call_id, tool in ((7, "Read"), ("c", 3.5), (None, "Read")):
        call = a_call(2, call_id, tool, {"a": 1})
        line = started_line("run", "plan.json", call, "exec_1", 1.5)
        assert line == encode_json(started_record("run", "plan.json", call, "exec_1", 1.5))


def test_an_input_that_is_not_a_dict_is_written_as_one() -> None:
    from types import MappingProxyType

    call = a_call(0, "c", "Read", MappingProxyType({"file_path": "a.txt"}))
    line = started_line("run", "p", call, "exec_1", 0.25)
    assert json.loads(line)["input"] == {"file_path": "a.txt"}
    assert line == encode_json(started_record("run", "p", call, "exec_1", 0.25))


def test_a_result_is_serialised_once_and_a_replaced_copy_afresh() -> None:
    from dataclasses import replace

    from toolrun.execution.results import DecidedBy, Result, Status

    result = Result(
        index=0, id="c", execution_id="exec_1", run_id="run", plan="p", tool="Read",
        input={"file_path": "a.txt"}, decision="allow", decided_by=DecidedBy("mode"),
        status=Status.OK, output="x",
    )
    line = result.json_line()
    assert result.json_line() is line
    assert json.loads(line)["status"] == "ok"
    failed = replace(result, status=Status.ERROR, error="boom")
    assert json.loads(failed.json_line())["status"] == "error"
    assert failed.journal_line() == '{"event": "result", ' + failed.json_line()[1:]
    assert result == replace(result) and result.json_line() is line


def test_a_result_made_directly_is_the_one_the_general_path_makes(tmp_path: Path) -> None:
    """Without hooks, rewrites or a dry run a call's result is built directly; it is
    the same result, field for field, as the general path gives it."""
    from toolrun.execution.executor import ExecSettings, Executor, _Ordered, _PlanState
    from toolrun.execution.invocation import Outcome
    from toolrun.execution.results import CallDecision, DecidedBy, Status
    from toolrun.plan.models import Plan
    from toolrun.stored import OutputStore
    from toolrun.tools import default_registry

    from .test_executor import TableDecider

    ex = Executor(
        workspace=tmp_path, registry=default_registry(), decider=TableDecider(),
        settings=ExecSettings(), run_id="run-1",
    )
    state = _PlanState(
        plan=Plan("p.json", None, ()), out=_Ordered(lambda r: None), cwd=tmp_path, limiter=None
    )
    call = a_call(3, "call-4", "Read", {"file_path": "a.txt"})
    decision = CallDecision("allow", "allowed: inside", DecidedBy("mode", None, "default"))
    for status, error, meta in (
        (Status.OK, None, {"path": "/x/a.txt", "lines": 1}),
        (Status.ERROR, "exit code 2", {"exit_code": 2}),
        (Status.TIMEOUT, "timed out after 1 s", {}),
    ):
        outcome = Outcome(status, "out", error, 2, 100.25, 100.5, meta)
        store = OutputStore(tmp_path, "run-1", "exec_9", 1 << 20)
        made = ex._outcome_result(state, call, decision, "exec_9", outcome, 100.0, store, None)
        general = ex._result(
            state, call, decision, status, execution_id="exec_9", output="out", error=error,
            started_at=100.25, finished_at=100.5, wait_ms=250.0, duration_ms=250.0,
            attempts=2, metadata={**meta, **store.record()},
        )
        assert made == general
        assert made.json_line() == general.json_line()


def test_a_result_pickles_and_copies_with_or_without_its_line() -> None:
    import copy
    import pickle

    from toolrun.execution.results import DecidedBy, Result, Status

    result = Result(
        index=1, id="c", execution_id="exec_2", run_id="run", plan="p", tool="Bash",
        input={"command": "true"}, decision="allow", decided_by=DecidedBy("rule", "Bash(true)"),
        status=Status.OK,
    )
    for _ in range(2):  # before its line is made, and after
        again = pickle.loads(pickle.dumps(result))
        assert again == result and again.json_line() == result.json_line()
        assert copy.copy(result).json_line() == result.json_line()


def test_a_plain_result_built_in_field_order_is_the_keyword_build(tmp_path: Path) -> None:
    """``_result`` builds a result of only an error and where it runs (a dry run's usual
    one) in field order; it is the same result, field for field and as JSON, as the
    keyword build (a result with one field more takes it) makes for the same call."""
    from dataclasses import fields, replace

    from toolrun.execution.executor import ExecSettings, Executor, _Ordered, _PlanState
    from toolrun.execution.results import CallDecision, DecidedBy, Result, Status
    from toolrun.plan.models import Plan
    from toolrun.tools import default_registry

    from .test_executor import TableDecider

    ex = Executor(
        workspace=tmp_path, registry=default_registry(), decider=TableDecider(),
        settings=ExecSettings(dry_run=True), run_id="run-1",
    )
    state = _PlanState(
        plan=Plan("p.json", None, ()), out=_Ordered(lambda r: None), cwd=tmp_path, limiter=None
    )
    cases = [
        (a_call(0, "call-1", "Read", {"file_path": "a.txt"}),
         CallDecision("allow", "inside", DecidedBy("mode", None, "default")), Status.SKIPPED,
         {}),
        (a_call(1, "call-2", "Edit", {"file_path": ".env", "old_string": "a", "new_string": "b"}),
         CallDecision("deny", "denied: rule", DecidedBy("rule", "Edit(./.env)", "t.yaml:1")),
         Status.DENIED, {"error": "denied: rule"}),
        (a_call(2, "call-3", "Bash", {"command": "ls"}),
         CallDecision("allow", "read-only", DecidedBy("readonly"), runs_in="unsandboxed",
                      runs_in_why="as configured"), Status.SKIPPED, {}),
        (a_call(3, "call-4", "Grep", {"pattern": "x"}),
         CallDecision("ask", "asks", DecidedBy("mode", None, "default")), Status.SKIPPED,
         {"error": None}),
    ]  # fmt: skip
    for call, decision, status, extra in cases:
        made = ex._result(state, call, decision, status, **extra)
        # the keyword build: forced by a field the plain build does not take
        general = ex._result(state, call, decision, status, aborted_before_launch=False, **extra)
        assert [f.name for f in fields(Result)][-2:] == ["runs_in_why", "_line"]
        assert made == replace(general, execution_id=made.execution_id)
        assert made.json_line() == replace(general, execution_id=made.execution_id).json_line()
        assert made.metadata == {} and made.output == "" and made.location == call.location
