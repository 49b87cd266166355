"""The loader's fast paths for a plan's header and turns give what the schema's models
give, or defer to them (a plain plan is loaded without importing pydantic)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from toolrun.plan import loader
from toolrun.plan.schema import CallSpec, PlanHeader, TurnHeader


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
