"""The config fast path takes a file only when the schema would read it the same way.

Its shapes declare the models' fields, keys and defaults (checked here against the models,
so a field added to the schema and not to the shapes fails), and for generated files, valid,
near-valid and wrong, it either defers or gives what the model gives: the same sections,
and through :func:`load_config` the same Config, warnings and problems.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from toolrun.config import fastpath, keys, schema
from toolrun.config.fastpath import SHAPES, Section, Shape, read_config
from toolrun.config.loader import load_config
from toolrun.errors import ConfigError


def _default(field: Any) -> object:
    if field.is_required():
        return "<required>"
    value = field.get_default(call_default_factory=True)
    return tuple(value) if isinstance(value, list) else value


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_declares_its_models_fields_keys_and_defaults(name: str) -> None:
    model: type[BaseModel] = getattr(schema, name)
    shape = SHAPES[name]
    fields = model.model_fields
    assert set(shape.checks) == set(fields)
    assert shape.aliases == {n: f.alias for n, f in fields.items() if f.alias}
    assert shape.keys == {f.alias or n for n, f in fields.items()}
    assert shape.forbid == (model.model_config.get("extra") == "forbid")
    shaped = {n: "<required>" if d is fastpath._REQUIRED else d for n, d in shape.defaults.items()}
    assert shaped == {n: _default(f) for n, f in fields.items()}


def test_check_keys_knows_the_keys_the_models_declare() -> None:
    """check_keys runs without pydantic on a static table: the shapes' keys."""
    for name in SHAPES:
        model: type[BaseModel] = getattr(schema, name)
        assert keys._fields(name) == {f.alias or n for n, f in model.model_fields.items()}


def test_every_model_the_loader_reads_has_a_shape() -> None:
    """A new section model in the schema needs its shape (or the fast path defers it)."""
    read = {"ConfigFile", *SHAPES}
    nested_elsewhere = {"McpServerSpec", "ExampleSpec"}  # always deferred
    models = {
        n
        for n, v in vars(schema).items()
        if isinstance(v, type) and issubclass(v, BaseModel) and v.__module__ == schema.__name__
    }
    assert models - {"_Open"} == read | nested_elsewhere


def plain(value: object) -> object:
    """A model or a section as comparable data: (model name, fields); lists as tuples."""
    if isinstance(value, BaseModel):
        return (
            type(value).__name__,
            {n: plain(getattr(value, n)) for n in type(value).model_fields},
        )
    if isinstance(value, Section):
        name = next(n for n, s in SHAPES.items() if s.cls is type(value))
        return (name, {n: plain(getattr(value, n)) for n in SHAPES[name].checks})
    if isinstance(value, (list, tuple)):
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


WORDS = (
    "default", "plan", "Plan", "acceptEdits", "bypassPermissions", "dontAsk", "disable",
    "open", "closed", "read", "write", "execute", "network", "deny", "mask", "command",
    "prompt", "", "*", "Bash", "Bash(git status)", "Read(src/**)", "Edit", "64MiB", "1.5kB",
    "10", "1K", " 2 GB ", "-1", "true", "yes", "PreToolUse", "PostToolUse", "Pre.*",
)  # fmt: skip


def scalars(text: st.SearchStrategy[str]) -> st.SearchStrategy[object]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-2, 5),
        st.integers(),
        st.sampled_from([2**53, 2**63 - 1, 2**63, -(2**63)]),
        st.floats(),
        st.sampled_from(WORDS),
        text,
    )


def values(text: st.SearchStrategy[str]) -> st.SearchStrategy[object]:
    base = scalars(text)
    return st.recursive(
        base,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.sampled_from(WORDS) | text, inner, max_size=3)
        ),
        max_leaves=6,
    )


def shaped(shape: Shape, text: st.SearchStrategy[str], depth: int = 0) -> st.SearchStrategy[Any]:
    """Dicts of the shape's keys (by name or alias), a few unknown ones, values that fit
    or nearly fit: nested sections, lists of sections or strings, or any value."""

    def field(name: str) -> st.SearchStrategy[object]:
        nested = _nested(shape, name)
        anything = values(text)
        words = st.sampled_from(WORDS)
        options: list[st.SearchStrategy[object]] = [
            anything,
            st.lists(text, max_size=3),
            # values that nearly fit, so that many files are wholly valid
            st.booleans(),
            st.integers(0, 3),
            words,
            st.lists(words, max_size=2),
        ]
        if nested is not None and depth < 4:
            inner = shaped(nested, text, depth + 1)
            options += [inner, st.lists(inner, max_size=2)]
            if name == "hooks" and shape is fastpath.CONFIG:
                events = st.sampled_from(("PreToolUse", "PostToolUse", "Stop")) | text
                options.append(st.dictionaries(events, st.lists(inner, max_size=2), max_size=2))
        if name == "kindLimits":
            options.append(st.dictionaries(st.sampled_from(WORDS), scalars(text), max_size=3))
        return st.one_of(*options)

    keys = sorted({*shape.names, "unknownKey", "$schema", "if_"})
    return st.lists(st.sampled_from(keys), max_size=4, unique=True).flatmap(
        lambda chosen: st.fixed_dictionaries(
            {k: field(shape.names.get(k, "")) for k in chosen if k}
        )
    )


def _nested(shape: Shape, name: str) -> Shape | None:
    return {
        (fastpath.CONFIG, "permissions"): fastpath.PERMISSIONS,
        (fastpath.CONFIG, "hooks"): fastpath.HOOK_MATCHER,
        (fastpath.CONFIG, "toolrun"): fastpath.TOOLRUN,
        (fastpath.TOOLRUN, "autoVerify"): fastpath.VERIFIER,
        (fastpath.CONFIG, "sandbox"): fastpath.SANDBOX,
        (fastpath.HOOK_MATCHER, "hooks"): fastpath.HOOK_COMMAND,
        (fastpath.SANDBOX, "filesystem"): fastpath.SANDBOX_FILESYSTEM,
        (fastpath.SANDBOX, "network"): fastpath.SANDBOX_NETWORK,
        (fastpath.SANDBOX, "credentials"): fastpath.SANDBOX_CREDENTIALS,
        (fastpath.SANDBOX_CREDENTIALS, "files"): fastpath.CREDENTIAL_FILE,
        (fastpath.SANDBOX_CREDENTIALS, "envVars"): fastpath.CREDENTIAL_ENV,
    }.get((shape, name))


ANY_TEXT = st.text(max_size=8)


@settings(max_examples=600, deadline=None)
@given(shaped(fastpath.CONFIG, ANY_TEXT))
def test_the_fast_path_defers_or_reads_a_file_as_the_model_does(data: dict[str, Any]) -> None:
    found = read_config(data)
    if found is None:
        return
    try:
        model = schema.ConfigFile.model_validate(data)
    except ValidationError as exc:  # pragma: no cover - what the property forbids
        raise AssertionError(f"the fast path took what the model refuses: {exc}") from exc
    assert plain(found) == plain(model)


SAFE_TEXT = st.text(st.characters(codec="ascii", categories=("L", "N", "P", "Zs")), max_size=8)


def _load(ws: Path, home: Path) -> object:
    try:
        return load_config(workspace=ws, env={}, home=home)
    except ConfigError as exc:
        return ("ConfigError", [str(p) for p in exc.problems])


@settings(max_examples=150, deadline=None)
@given(data=shaped(fastpath.CONFIG, SAFE_TEXT))
def test_load_config_gives_the_same_config_warnings_and_problems_either_way(
    data: dict[str, Any],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws, home = Path(tmp, "ws"), Path(tmp, "home")
        ws.mkdir()
        home.mkdir()
        (ws / "toolrun.yaml").write_text(yaml.safe_dump(data))
        fast = _load(ws, home)
        with pytest.MonkeyPatch.context() as m:
            m.setattr(fastpath, "read_config", lambda data: None)
            slow = _load(ws, home)
    assert fast == slow


def test_the_fast_path_takes_the_common_shapes() -> None:
    """Not vacuous: the benches' and the docs' configs are read without the model."""
    for data in (
        {"toolrun": {"maxCallsPerTurn": 10000}},
        {"permissions": {"allow": ["Edit"]}, "toolrun": {"maxCallsPerTurn": 1000}},
        {
            "permissions": {"allow": ["Edit"]},
            "toolrun": {
                "maxCallsPerTurn": 1000,
                "autoVerify": [
                    {"name": "ruff", "files": ["*.py"], "command": "ruff {files}", "format": "json"}
                ],
            },
        },
        {
            "$schema": "x",
            "permissions": {
                "allow": ["Bash(git status)"],
                "ask": ["Bash(git push:*)"],
                "deny": ["Read(.env)"],
                "defaultMode": "acceptEdits",
                "additionalDirectories": ["../lib"],
                "disableBypassPermissionsMode": "disable",
                "disableAutoMode": True,
            },
            "toolrun": {"maxStoredOutput": "64MiB", "hookTimeout": 5, "hookFailure": "closed"},
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"command": "./g", "if": "Bash(rm *)"}]}
                ]
            },
            "sandbox": {"enabled": True, "network": {"allowedDomains": ["x.org"]}},
            "model": "opus",
        },
    ):
        found = read_config(data)
        assert found is not None
        assert plain(found) == plain(schema.ConfigFile.model_validate(data))


@pytest.mark.parametrize(
    "data",
    [
        {"toolrun": {"maxCallsPerTurn": True}},  # a bool is not an int here, but pydantic's
        {"toolrun": {"maxCallsPerTurn": 2.0}},  # coerced to 2
        {"toolrun": {"maxCallsPerTurn": "5"}},  # coerced to 5
        {"toolrun": {"maxCalls": 5}},  # an unknown key: the model's error
        {"permissions": {"allow": "Bash"}},  # not a list
        {"permissions": {"allow": [1]}},
        {"permissions": {"defaultMode": "Plan"}},
        {"hooks": {"PreToolUse": [{"matcher": "Bash"}]}},  # hooks: is required
        {"hooks": {"PreToolUse": [{"hooks": [{"if": "Bash", "if_": "Read"}]}]}},
        {"mcpServers": {}},  # always the model's
        {"toolrun": {"examples": []}},
        {"toolrun": {"autoVerify": [{"name": "ruff", "files": [], "command": "ruff"}]}},
        {"toolrun": {"autoVerify": [{"name": "ruff", "files": ["*"], "command": "r", "x": 1}]}},
        {"toolrun": {"maxStoredOutput": "1K"}},  # refused by parse_size: the model says why
        {"toolrun": {"hookTimeout": 0}},
        {"sandbox": {"credentials": {"files": [{"path": ""}]}}},
        {1: True},
    ],
)
def test_what_the_fast_path_cannot_prove_goes_to_the_model(data: dict[Any, Any]) -> None:
    assert read_config(data) is None


def test_a_config_error_has_the_same_located_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text(
        "permissions:\n  allow: ['Bash(git status)']\n  defaultMode: Plan\n"
        "toolrun: {maxCallsPerTurn: 0, strict: yes}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(workspace=tmp_path, env={}, home=tmp_path)
    assert [str(p) for p in caught.value.problems] == [
        (
            "toolrun.yaml:3:3: permissions.defaultMode: Input should be 'default', "
            "'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions' or 'auto'"
        ),
        "toolrun.yaml:4:11: toolrun.maxCallsPerTurn: Input should be greater than or equal to 1",
    ]


def test_the_managed_locks_drop_a_fast_read_files_rules_and_hooks(tmp_path: Path) -> None:
    """The loader no longer copies a model to drop rules and hooks (a section is frozen)."""
    managed = tmp_path / "managed.json"
    managed.write_text(
        '{"allowManagedPermissionRulesOnly": true, "allowManagedHooksOnly": true,'
        ' "permissions": {"deny": ["Bash(rm *)"]}}'
    )
    (tmp_path / "toolrun.yaml").write_text(
        "permissions: {allow: [Bash], defaultMode: plan, additionalDirectories: [sub]}\n"
        "hooks: {PreToolUse: [{matcher: Bash, hooks: [{command: ./guard}]}]}\n"
    )
    (tmp_path / "sub").mkdir()
    config = load_config(workspace=tmp_path, env={}, home=tmp_path, managed_settings=managed)
    assert [r.text for r in config.rules] == ["Bash(rm *)"]
    assert config.hooks == ()
    assert config.default_mode == "plan"
    assert config.additional_directories == ((tmp_path / "sub").resolve(),)


@pytest.mark.parametrize(
    ("deny", "message"),
    [
        ("Bash", "permissions.deny: Input should be a valid list"),
        ("[Bash, 1]", "permissions.deny[1]: Input should be a valid string"),
        ("null", "permissions.deny: Input should be a valid list"),
        ("{Bash: x}", "permissions.deny: Input should be a valid list"),
    ],
)
def test_a_deny_list_of_the_wrong_shape_is_an_error_not_dropped(
    deny: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fail closed: a deny rule the fast path cannot read is the model's error, never a
    file read as if it had no rules."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text(f"permissions:\n  deny: {deny}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(workspace=tmp_path, env={}, home=tmp_path)
    assert [p.message for p in caught.value.problems] == [message.split(": ", 1)[1]]
    assert [p.path for p in caught.value.problems] == [message.split(": ", 1)[0]]
