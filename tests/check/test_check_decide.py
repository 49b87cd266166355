"""A check without hooks decides its plan without the event loop (``_decide_directly``):
every record it keeps is the one the executor's dry run (``run_stream``) gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolrun.commands import check_decide
from toolrun.commands.check import CheckRequest, check
from toolrun.report.models import CallCheck

CONFIG = {
    "toolrun": {"maxCallsPerTurn": 4},
    "permissions": {
        "allow": ["Bash(npm run test:*)", "Edit(src/**)"],
        "ask": ["Bash(curl *)", "WebFetch"],
        "deny": ["Read(.env)", "Bash(sudo *)", "Edit(secret/**)"],
    },
}

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("Read", {"file_path": "src/a.py"}),
    ("Read", {"file_path": ".env"}),
    ("Read", {"file_path": "/etc/passwd"}),
    ("Read", {}),  # not valid: a recorded call's tool refused it
    ("Edit", {"file_path": "src/a.py", "old_string": "a", "new_string": "b"}),
    ("Edit", {"file_path": "secret/k", "old_string": "a", "new_string": "b"}),
    ("Write", {"file_path": "out.txt", "content": "x"}),
    ("Grep", {"pattern": "x", "path": "src"}),
    ("Glob", {"pattern": "**/*.py"}),
    ("WebFetch", {"url": "https://example.com", "prompt": "p"}),
    ("Bash", {"command": "ls src"}),
    ("Bash", {"command": "git status && ls | head -3"}),
    ("Bash", {"command": "cd src && ls"}),
    ("Bash", {"command": "echo hi > out.txt"}),
    ("Bash", {"command": "rm -rf /"}),
    ("Bash", {"command": "sudo ls"}),
    ("Bash", {"command": "curl https://example.com"}),
    ("Bash", {"command": "npm run test:unit"}),
    ("Bash", {"command": "cat .env"}),
]

turns_of_calls = st.lists(
    st.lists(st.integers(0, len(CALLS) - 1), min_size=1, max_size=4), min_size=1, max_size=6
)


def _session(turns: list[list[int]]) -> str:
    """A Claude Code session log: one assistant message of tool uses a turn."""
    lines = []
    for t, turn in enumerate(turns):
        content = [
            {"type": "tool_use", "id": f"t{t}-{k}", "name": CALLS[i][0], "input": CALLS[i][1]}
            for k, i in enumerate(turn)
        ]
        lines.append(json.dumps({"type": "assistant", "message": {"id": f"m{t}", "content": content}}))
    return "\n".join(lines) + "\n"


def _plan(turns: list[list[int]]) -> str:
    """A toolrun plan (no call with an invalid input: the plan would not load)."""
    return json.dumps({"turns": [{"calls": [{"tool": CALLS[i][0], "input": CALLS[i][1]}
                                             for i in turn if CALLS[i][1]]}
                                 for turn in turns]})  # fmt: skip


def _through_the_event_loop(executor: Any, file: str, turns: list[Any], record: Any) -> None:
    first = next((t.calls[0].index for t in turns if t is not None and t.calls), 0)
    anyio.run(executor.run_stream, file, check_decide._released(turns), first)


def _records(ws: Path, name: str) -> list[tuple[Any, ...]]:
    (plan,) = check(CheckRequest([str(ws / name)], workspace=ws)).plans
    assert not plan.problems, plan.problems
    assert plan.calls
    return [(*c._replace(execution_id=""), plan.runs) for c in plan.calls]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=turns_of_calls)
def test_each_record_is_the_one_the_executors_dry_run_keeps(
    tmp_path: Path, turns: list[list[int]]
) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True, exist_ok=True)
    (ws / "src" / "a.py").write_text("a\n")
    (ws / "toolrun.yaml").write_text(json.dumps(CONFIG))
    (ws / "session.jsonl").write_text(_session(turns))
    (ws / "plan.json").write_text(_plan(turns))
    inputs = ["session.jsonl"] + (["plan.json"] if any(CALLS[i][1] for t in turns for i in t)
                                  else [])  # fmt: skip
    for name in inputs:
        direct = _records(ws, name)
        with mock.patch.object(check_decide, "_decide_directly", _through_the_event_loop):
            looped = _records(ws, name)
        assert direct == looped


def test_refused_calls_keep_their_place_among_the_calls_decided(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "toolrun.yaml").write_text(json.dumps(CONFIG))
    (ws / "s.jsonl").write_text(_session([[0, 3, 10, 3], [3, 0, 16]]))  # Read {} is refused
    (plan,) = check(CheckRequest([str(ws / "s.jsonl")], workspace=ws)).plans
    calls: tuple[CallCheck, ...] = plan.calls
    assert [c.position for c in calls] == list(range(7))
    assert [c.status for c in calls] == ["skipped", "error", "skipped", "error",
                                         "error", "skipped", "skipped"]  # fmt: skip
    assert [c.kind for c in calls if c.status == "error"] == ["input"] * 3
    assert [c.run for c in calls] == [1, 0, 1, 0, 0, 2, 3]
    assert calls[6].decision == "ask" and calls[2].runs_in is not None
