"""The built-in tools' stdlib validators give what their pydantic models give, or defer.

The fast path (:meth:`InputSpec.fast`) may only take an input pydantic takes unchanged;
everything else goes to the model. These pin that: each spec declares the model's
fields, and for generated inputs (valid ones, near misses, wrong types, bools for ints,
floats, unknown keys, aliases, None) the fast answer is either "defer" or exactly the
params the model's answer converts to.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from toolrun.tools.builtins import BUILTIN_CLASSES, builtin_tool
from toolrun.tools.builtins.multiedit import EDIT
from toolrun.tools.inputs import InputSpec, Params, as_dict, validate_input
from toolrun.validation import Invalid

TOOLS = list(BUILTIN_CLASSES)


def spec_of(tool: str) -> InputSpec:
    spec = builtin_tool(tool).input_spec
    assert spec is not None
    return spec


def all_specs() -> list[InputSpec]:
    return [spec_of(t) for t in TOOLS] + [EDIT]


def keys_of(name: str, info: FieldInfo) -> set[str]:
    """Every key pydantic takes for a field (populate_by_name: its name too)."""
    keys = {name}
    if info.alias:
        keys.add(info.alias)
    choices = getattr(info.validation_alias, "choices", None)
    if choices is not None:
        keys.update(c for c in choices if isinstance(c, str))
    elif isinstance(info.validation_alias, str):
        keys.add(info.validation_alias)
    return keys


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.model.__name__)
def test_each_spec_declares_its_models_fields_keys_defaults_and_required(spec: InputSpec) -> None:
    model = spec.model
    assert model.model_config.get("populate_by_name") is True
    assert model.model_config.get("extra") == "forbid"
    assert list(spec.fields) == list(model.model_fields)
    params_fields = {f.name: f for f in dataclasses.fields(spec.params)}  # type: ignore[arg-type]
    assert list(params_fields) == list(model.model_fields)
    for name, info in model.model_fields.items():
        assert keys_of(name, info) == {name, *spec.fields[name].aliases}, name
        declared = params_fields[name]
        if info.is_required():
            assert declared.default is dataclasses.MISSING, name
            assert declared.default_factory is dataclasses.MISSING, name
        else:
            expected = info.get_default(call_default_factory=True)
            if isinstance(expected, list):
                expected = tuple(expected)
            assert spec.defaults[name] == expected, name


def test_every_tool_reads_its_spec_and_its_model_lazily() -> None:
    for name in TOOLS:
        tool = builtin_tool(name)
        assert tool.input_model is spec_of(name).model
        assert issubclass(tool.input_model, BaseModel)
        assert issubclass(spec_of(name).params, Params)


# -- values: what a plan could hold (JSON or YAML) --------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.sampled_from([0, 1, 2, 599_999, 600_000, 600_001, 2**63 - 1, 2**63, -(2**63), 2**70]),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([1.0, 0.5, 5.0]),
    st.text(max_size=8),
    st.sampled_from(["", "5", "1000", "true", "content", "count", "files_with_matches", "x"]),
    st.sampled_from(["\ud800", "a\x00b", "\u00e9", " 5 "]),  # surrogates, NUL, non-ASCII
)
EDIT_ITEMS = st.dictionaries(
    st.sampled_from(["old_string", "new_string", "replace_all", "other"]),
    SCALARS,
    max_size=4,
)
VALUES = st.one_of(
    SCALARS,
    st.lists(st.text(max_size=4), max_size=3),
    st.lists(SCALARS, max_size=3),
    st.lists(EDIT_ITEMS, max_size=3),
    st.dictionaries(st.text(max_size=3), SCALARS, max_size=2),
)


def valid_value(spec: InputSpec, name: str) -> st.SearchStrategy[Any]:
    """A value the field takes (from its default's type), to make near-valid inputs."""
    default = spec.defaults.get(name, "")
    if name == "edits":
        return st.lists(
            st.fixed_dictionaries(
                {"old_string": st.text(max_size=4), "new_string": st.text(max_size=4)},
                optional={"replace_all": st.booleans()},
            ),
            min_size=1,
            max_size=3,
        )
    if name == "output_mode":
        return st.sampled_from(["content", "files_with_matches", "count"])
    if isinstance(default, bool):
        return st.booleans()
    if isinstance(default, tuple):
        return st.lists(st.text(max_size=4), max_size=3)
    if name in ("timeout", "offset", "limit", "after", "before", "context", "head_limit"):
        return st.none() | st.integers(min_value=0, max_value=700_000)
    if default is None:
        return st.none() | st.text(max_size=6)
    return st.text(max_size=6)


@st.composite
def inputs(draw: st.DrawFn, spec: InputSpec) -> Any:
    keys = [k for name, f in spec.fields.items() for k in (name, *f.aliases)]
    data: dict[Any, Any] = {}
    for name, field in spec.fields.items():
        if draw(st.booleans()) or name not in spec.defaults:  # most required keys there
            key = draw(st.sampled_from((name, *field.aliases)))
            data[key] = draw(valid_value(spec, name))
    for _ in range(draw(st.integers(min_value=0, max_value=2))):  # then some damage
        key = draw(st.sampled_from(keys) | st.sampled_from(["extra", "Command", "-x", 1]))
        data[key] = draw(VALUES | valid_value(spec, spec.keys.get(str(key), "extra")))
    if data and draw(st.integers(min_value=0, max_value=5)) == 0:
        del data[draw(st.sampled_from(sorted(data, key=str)))]
    return data if draw(st.integers(min_value=0, max_value=30)) else draw(VALUES)


def pydantic_answer(spec: InputSpec, data: Any) -> Params | None:
    try:
        return spec.from_model(spec.model.model_validate(data))
    except ValidationError:
        return None


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.model.__name__)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_fast_path_defers_or_agrees_with_pydantic(spec: InputSpec, data: st.DataObject) -> None:
    value = data.draw(inputs(spec))
    fast = spec.fast(value)
    if fast is not None:
        assert fast == pydantic_answer(spec, value)
        assert type(fast) is spec.params


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.model.__name__)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_validate_gives_pydantics_answer_or_its_error(spec: InputSpec, data: st.DataObject) -> None:
    value = data.draw(inputs(spec))
    expected = pydantic_answer(spec, value)
    if expected is None:
        with pytest.raises(Invalid) as raised:
            spec.validate(value)
        with pytest.raises(ValidationError) as direct:
            spec.model.model_validate(value)
        assert raised.value.error.errors() == direct.value.errors()
        assert str(raised.value) == str(direct.value)
    else:
        assert spec.validate(value) == expected


# -- examples -------------------------------------------------------------------------------


def test_a_plain_bash_input_is_taken_without_pydantic() -> None:
    spec = spec_of("Bash")
    params = spec.fast({"command": "ls", "timeout": 1000})
    assert params is not None
    assert (params.command, params.timeout, params.description) == ("ls", 1000, None)  # type: ignore[attr-defined]
    assert params.dangerouslyDisableSandbox is False  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "data",
    [
        {"command": "ls", "timeout": True},  # a bool where an int goes: pydantic's to judge
        {"command": "ls", "timeout": 5.0},  # a float pydantic would make an int
        {"command": "ls", "timeout": "5"},  # a string pydantic would make an int
        {"command": "ls", "timeout": 0},  # below the bound: pydantic's message
        {"command": "ls", "timeout": 600_001},
        {"command": "ls", "dangerouslyDisableSandbox": 1},
        {"command": 5},
        {"command": "ls", "other": 1},  # unknown key
        {},  # a required key missing
        ["ls"],
    ],
)
def test_anything_unusual_is_left_to_pydantic(data: Any) -> None:
    assert spec_of("Bash").fast(data) is None


def test_a_coercion_pydantic_makes_is_kept_through_the_fallback() -> None:
    params = validate_input(builtin_tool("Bash"), {"command": "ls", "timeout": "5000"})
    assert params == spec_of("Bash").params(command="ls", timeout=5000)  # type: ignore[call-arg]
    assert validate_input(builtin_tool("Bash"), {"command": "ls", "timeout": 5000.0}) == params


def test_aliases_are_taken_and_a_field_written_twice_is_left_to_pydantic() -> None:
    grep = spec_of("Grep")
    fast = grep.fast({"pattern": "x", "-i": True, "-C": 2, "head_limit": 0})
    assert fast is not None
    assert (fast.case_insensitive, fast.context, fast.head_limit) == (True, 2, 0)  # type: ignore[attr-defined]
    assert grep.fast({"pattern": "x", "-i": True, "case_insensitive": True}) is None
    with pytest.raises(Invalid, match="Extra inputs are not permitted"):
        grep.validate({"pattern": "x", "-i": True, "case_insensitive": True})
    patch = spec_of("ApplyPatch")
    assert patch.fast({"input": "*** Begin Patch"}) == patch.fast({"patch": "*** Begin Patch"})
    assert patch.fast({"input": "a", "patch": "b"}) is None


def test_multiedit_edits_are_nested_params_and_an_empty_list_is_pydantics() -> None:
    spec = spec_of("MultiEdit")
    data = {"file_path": "a", "edits": [{"old_string": "x", "new_string": "y"}]}
    fast = spec.fast(data)
    assert fast is not None and fast == pydantic_answer(spec, data)
    assert type(fast.edits[0]) is EDIT.params  # type: ignore[attr-defined]
    assert spec.fast({"file_path": "a", "edits": []}) is None
    with pytest.raises(Invalid, match="at least 1 item"):
        spec.validate({"file_path": "a", "edits": []})
    lax = spec.validate({"file_path": "a", "edits": [{"old_string": "x", "new_string": "y", "replace_all": 1}]})
    assert lax.edits[0].replace_all is True  # type: ignore[attr-defined]


def test_as_dict_is_what_model_dump_gives() -> None:
    for name, data in [
        ("Bash", {"command": "ls"}),
        ("LS", {"path": ".", "ignore": ["*.pyc"]}),
        ("MultiEdit", {"file_path": "a", "edits": [{"old_string": "x", "new_string": "y"}]}),
        ("Grep", {"pattern": "x", "-n": False}),
    ]:
        spec = spec_of(name)
        params = spec.fast(data)
        assert params is not None
        assert as_dict(params) == spec.model.model_validate(data).model_dump()


def test_the_compiled_validator_reads_every_field_whatever_the_input_leaves_out() -> None:
    """Each spec's validator is written for it: once the input's keys are all taken, the
    other fields are their defaults without being looked up, so a key late in the spec
    after many left out is still read (and a field written twice still deferred)."""
    grep = spec_of("Grep")
    fast = grep.fast({"multiline": True, "pattern": "x"})
    assert fast is not None and fast.multiline is True  # type: ignore[attr-defined]
    fast = grep.fast({"pattern": "x", "-C": 2, "head_limit": 1})
    assert fast is not None and (fast.context, fast.head_limit) == (2, 1)  # type: ignore[attr-defined]
    assert grep.fast({"pattern": "x", "-C": 2, "context": 2}) is None
    assert grep.fast({"pattern": "x", "multiline": 1}) is None
    assert grep.compiled() is grep.fast  # (compiled once, then kept)

