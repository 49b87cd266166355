"""The loader's fast paths for a plan's header and turns give what the schema's models
give, or defer to them (a plain plan is loaded without importing pydantic)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.tools.test_inputs import VALUES as INPUT_VALUES
from tests.tools.test_inputs import inputs, spec_of, valid_value
from toolrun.errors import PlanError, Problem
from toolrun.plan import loader
from toolrun.plan.loader import plan_from_document
from toolrun.plan.schema import CallSpec, PlanHeader, TurnHeader
from toolrun.tools import ToolRegistry, default_registry
from toolrun.yamlfile import Document, DocumentError, parse_text


def test_the_fast_paths_know_the_models_keys() -> None:
    assert set(PlanHeader.model_fields) == loader._HEADER_KEYS
    assert set(CallSpec.model_fields) == loader._CALL_KEYS
    assert set(TurnHeader.model_fields) == {"calls"}


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-1, max_value=2),
    st.floats(allow_nan=False) | st.just(1.0),
    st.text(max_size=4),
    st.just("1"),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)
KEYS = st.sampled_from(["version", "name", "description", "turns", "calls", "other", 1])


def model_answer(model: Any, data: Any) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError:
        return None


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=4))
def test_a_plain_header_is_what_planheader_gives(data: dict[Any, Any]) -> None:
    fast = loader._plain_header(data)
    if fast is not None:
        header = model_answer(PlanHeader, data)
        assert header is not None
        assert fast == loader._Header.of(header)


@settings(max_examples=300, deadline=None)
@given(st.one_of(VALUES, st.dictionaries(st.sampled_from(["calls", "name", 0]), VALUES, max_size=2)))
def test_a_plain_turn_is_what_turnheader_gives(data: Any) -> None:
    fast = loader._plain_turn(data)
    if fast is not None:
        turn = model_answer(TurnHeader, data)
        assert turn is not None and fast == turn.calls


def test_the_header_examples() -> None:
    assert loader._plain_header({"version": 1, "name": "x", "calls": []}) == ("x", None, [])
    assert loader._plain_header({"version": True, "calls": []}) is None  # pydantic's to judge
    assert loader._plain_header({"version": 2, "calls": []}) is None
    assert loader._plain_header({"calls": [], "call": []}) is None
    assert loader._plain_turn({"calls": []}) == []
    assert loader._plain_turn({"calls": [], "id": 1}) is None


def test_a_call_and_a_decision_s_reads_and_writes_keep_the_dataclass_s_init() -> None:
    """Call, Reads and Writes are built by fast_init (issue 31: one or two per call of a big
    plan): the same signature and defaults, still frozen, equal and hashable as before."""
    import dataclasses
    import inspect

    from toolrun.errors import Location
    from toolrun.execution.depends import Reads, Writes
    from toolrun.plan.models import Call

    for cls in (Call, Reads, Writes):
        params = inspect.signature(cls).parameters
        fields = dataclasses.fields(cls)
        assert list(params) == [f.name for f in fields]
        assert [p.default for p in params.values()] == [
            inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
            for f in fields
        ]
    here = Location("p.json", 1, 2)
    call = Call(0, 0, "call-1", "Read", {"file_path": "a"}, None, None, here)  # type: ignore[arg-type]
    assert call == Call(index=0, turn=0, id="call-1", tool="Read", input={"file_path": "a"},
                        params=None, timeout=None, location=here)  # type: ignore[arg-type]  # fmt: skip
    assert dataclasses.replace(call, id="x").id == "x" and dataclasses.replace(call, id="x") != call
    assert Writes(frozenset({"/a"})) == Writes(frozenset({"/a"}), False, False, False)
    assert hash(Reads(("/a",))) == hash(Reads(lines=("/a",)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.id = "y"  # type: ignore[misc]


# -- a call taken at once, or through CallSpec and its tool's validation ----------------

TOOL_NAMES = ["Read", "Bash", "Grep", "Edit", "MultiEdit", "LS", "Nope", 3, None]
CALL_IDS = st.sampled_from([None, "", "a", "a", "call-2", "call-2", "call-3", 5, True])
TIMEOUTS = st.sampled_from([None, 1, 2.5, 0, -1, True, "5", 10**30, float("nan")])


@st.composite
def raw_calls(draw: st.DrawFn) -> Any:
    """A call as a plan holds it: mostly valid, with the near misses every path must
    answer the same way (ids missing, empty, repeated or not strings; timeouts of every
    type; unknown tools and keys; inputs pydantic alone can judge, or refuses)."""
    tool = draw(st.sampled_from(TOOL_NAMES))
    if isinstance(tool, str) and tool != "Nope":
        spec = spec_of(tool)
        # a valid input (its required keys, some others), or one with near misses
        plain = {name: draw(valid_value(spec, name)) for name in spec.fields
                 if name not in spec.defaults or draw(st.booleans())}  # fmt: skip
        tool_input = plain if draw(st.booleans()) else draw(inputs(spec))
    else:
        tool_input = draw(st.dictionaries(st.sampled_from(["file_path", "x"]), INPUT_VALUES, max_size=2))
    call: dict[str, Any] = {"tool": tool, "input": tool_input}
    for key, values in (("id", CALL_IDS), ("timeout", TIMEOUTS)):
        if draw(st.booleans()):
            call[key] = draw(values)
    if draw(st.integers(0, 9)) == 0:
        del call[draw(st.sampled_from(sorted(call)))]
    if draw(st.integers(0, 19)) == 0:
        call["extra"] = 1
    return call if draw(st.integers(0, 30)) else draw(INPUT_VALUES)


def _as_text(plan: dict[str, Any], syntax: str) -> str:
    if syntax == "json":
        return json.dumps(plan)
    if syntax == "json-indented":
        return json.dumps(plan, indent=2)
    if syntax == "yaml-flow":  # one call a line, as bench/check.py writes big plans
        lines = ["turns:"]
        for turn in plan["turns"]:
            lines.append("  - calls:" + ("" if turn["calls"] else " []"))
            lines.extend(f"      - {json.dumps(call)}" for call in turn["calls"])
        return "\n".join(lines) + "\n"
    return yaml.safe_dump(plan, sort_keys=False)


def _outcome(doc: Document, registry: ToolRegistry) -> tuple[str, list[str], str]:
    """Every call each turn builds (every field, types too: their repr), even in a plan
    with problems, every problem and where each id was first used; then the plan, or
    its problems."""
    problems: list[Problem] = []
    calls = loader._Calls(doc, registry, problems)
    built, index = [], 0
    for t, turn in enumerate(doc.data["turns"]):
        built += calls.turn(["turns", t, "calls"], turn["calls"], index, t, keep=True)
        index += len(turn["calls"])
    try:
        plan = repr(plan_from_document(doc, registry))
    except PlanError as exc:
        plan = repr([str(p) for p in exc.problems])
    return repr(built), [str(p) for p in problems], repr(calls.seen_ids) + plan


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(st.lists(raw_calls(), max_size=4), min_size=1, max_size=3),
    syntax=st.sampled_from(["json", "json-indented", "yaml-flow", "yaml-block"]),
)
def test_a_call_taken_at_once_is_what_the_full_path_gives(
    turns: list[list[Any]], syntax: str
) -> None:
    """The loader takes a plain call at once (issue 31); forced through CallSpec and its
    tool's validation (as a document that may hold a NUL has every call), each call
    gives the same Call, the same duplicate and unknown-tool problems, at the same
    places, or the plan the same problems."""
    registry = default_registry(plugins=False)
    text = _as_text({"turns": [{"calls": calls} for calls in turns]}, syntax)
    try:
        doc = parse_text(text, "p", json_syntax=syntax.startswith("json"))
    except DocumentError:
        return  # (what neither path sees)
    full = dataclasses.replace(doc, nul_possible=True)
    assert _outcome(doc, registry) == _outcome(full, registry)


def test_a_plain_call_is_taken_without_the_full_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def full_path(*args: object) -> None:
        raise AssertionError("a plain call went through _build_call")

    monkeypatch.setattr(loader, "_build_call", full_path)
    calls = [
        {"tool": "Read", "input": {"file_path": "a"}},
        {"tool": "Grep", "input": {"pattern": "x", "-i": True}, "id": "g", "timeout": 5},
        {"tool": "Bash", "input": {"command": "ls", "timeout": 1000}, "timeout": 1.5},
    ]
    for text, syntax in [(json.dumps({"calls": calls}), True), (_as_text(
            {"turns": [{"calls": calls}]}, "yaml-flow"), False)]:  # fmt: skip
        plan = plan_from_document(parse_text(text, "p", json_syntax=syntax),
                                  default_registry(plugins=False))  # fmt: skip
        assert [(c.id, c.timeout) for c in plan.calls] == [("call-1", None), ("g", 5.0),
                                                          ("call-3", 1.5)]  # fmt: skip
        assert type(next(iter(plan.calls)).timeout) is not int
