"""A group of ``**/x`` rules is tried only on forms that contain one of its fixed strings
(the combined regex is slow to fail on the others); which rule applies, and why, is
exactly what trying every rule gives (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.permissions.conftest import make_config
from toolrun.permissions import PermissionEngine, rules

#: Rule sets whose groups start with a repeat (``**/``): each spelling of the class.
SETS: list[dict[str, list[str]]] = [
    {"ask": ["Edit(**/package.json)", "Edit(**/pyproject.toml)", "Edit(**/.github/**)"]},
    {"deny": ["Read(**/*.lock)", "Read(**/secrets/*.txt)", "Read(./.env)"]},
    {"ask": ["Edit(**/a?c/**)", "Edit(**/[ab]x.py)", "Edit(**/x*y/z)"]},
    {"deny": ["Edit(**/.git/**)", "Edit(**)"], "allow": ["Edit(**/src/**)", "Read(*/b.py)"]},
]
FRAGMENTS = ["package.json", "pyproject.toml", ".github", "a.lock", "secrets", "x.txt",
             "abc", "bx.py", "xay", "z", ".git", "src", "b.py", ".env", "PACKAGE.JSON", "q"]


def _json(decision: Any) -> str:
    return json.dumps(decision.to_json(), sort_keys=True, default=str)


@pytest.mark.parametrize("index", range(len(SETS)))
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=5),
       tool=st.sampled_from(["Read", "Edit", "Grep"]))
def test_the_prefilter_never_changes_a_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int, parts: list[str], tool: str
) -> None:
    config = make_config(tmp_path, **SETS[index])
    fast = PermissionEngine(config, memo=False)
    with monkeypatch.context() as m:
        m.setattr(rules, "_needed", lambda _patterns: None)
        every = PermissionEngine(config, memo=False)
    path = "/".join(parts)
    field = "path" if tool == "Grep" else "file_path"
    call = {field: path, "old_string": "a", "new_string": "b"} if tool == "Edit" else {
        field: path}
    assert _json(fast.decide(tool, call, cwd=tmp_path)) == _json(
        every.decide(tool, call, cwd=tmp_path))


def test_a_group_of_double_star_rules_knows_its_fixed_strings() -> None:
    assert rules._needed([r"(?:/.*)?/package\.json(?:/.*)?", r"(?:/.*)?/\.github(?:/.*)?"]) == (
        "/package.json", "/.github")
    # one pattern without a fixed string (`**`), or all starting with one: none looked for
    assert rules._needed([r"(?:/.*)?/x(?:/.*)?", r".*"]) is None
    assert rules._needed([r"/ws/src(?:/.*)?", r"/root/\.ssh(?:/.*)?"]) is None
    assert rules._needed([r"(?i:(?:/.*)?/x)", r"(?:/.*)?/y"]) is None


@pytest.mark.parametrize("path", ["package.json", "a/package.json", "a/package.json/b",
                                  "deep/er/.github/workflows/ci.yml"])
def test_double_star_ask_rules_still_ask(tmp_path: Path, path: str) -> None:
    engine = PermissionEngine(make_config(tmp_path, **SETS[0]), memo=False)
    call = {"file_path": path, "old_string": "a", "new_string": "b"}
    decision = engine.decide("Edit", call, cwd=tmp_path)
    assert decision.decision == "ask" and decision.decided_by.kind == "rule", decision.reason
