"""Each PreToolUse JSON field, and how several hooks' answers merge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.hooks.conftest import Hooks, py_hook
from toolrun.hooks import HookRun, merge_pre_tool_use

pytestmark = pytest.mark.anyio

REPLY = """
import json, sys
json.load(sys.stdin)
print(json.dumps(json.loads(sys.argv[1])))
"""


def reply(ws: Path, output: dict[str, Any]) -> str:
    import shlex

    command = py_hook(ws, "reply.py", REPLY)
    return f"{command} {shlex.quote(json.dumps(output))}"


def specific(**fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}}


@pytest.mark.parametrize("decision", ["allow", "deny", "ask", "defer"])
async def test_permission_decision_and_reason(hooks: Hooks, ws: Path, decision: str) -> None:
    out = specific(permissionDecision=decision, permissionDecisionReason=f"said {decision}")
    runner = hooks.add("PreToolUse", "Bash", reply(ws, out)).runner()
    result = await runner.pre_tool_use("Bash", {"command": "ls"}, call_id="c1")
    assert (result.decision, result.reason) == (decision, f"said {decision}")
    assert result.runs[0].decision == decision


async def test_updated_input_replaces_the_whole_input(hooks: Hooks, ws: Path) -> None:
    out = specific(permissionDecision="allow", updatedInput={"command": "ls -la"})
    runner = hooks.add("PreToolUse", "Bash", reply(ws, out)).runner()
    result = await runner.pre_tool_use(
        "Bash", {"command": "ls", "timeout": 5, "description": "list"}, call_id="c1"
    )
    assert result.updated_input == {"command": "ls -la"}


async def test_additional_context_and_system_message(hooks: Hooks, ws: Path) -> None:
    out = {**specific(additionalContext="repo uses pnpm"), "systemMessage": "hook note"}
    runner = hooks.add("PreToolUse", "Bash", reply(ws, out)).runner()
    result = await runner.pre_tool_use("Bash", {"command": "ls"}, call_id="c1")
    assert result.additional_context == ("repo uses pnpm",)
    assert result.system_messages == ("hook note",)
    assert result.decision is None


@pytest.mark.parametrize(("legacy", "expected"), [("approve", "allow"), ("block", "deny")])
async def test_legacy_top_level_decision(
    hooks: Hooks, ws: Path, legacy: str, expected: str
) -> None:
    runner = hooks.add("PreToolUse", "", reply(ws, {"decision": legacy, "reason": "old"})).runner()
    result = await runner.pre_tool_use("Read", {"file_path": "a"}, call_id="c1")
    assert (result.decision, result.reason) == (expected, "old")


async def test_hook_specific_decision_wins_over_legacy(hooks: Hooks, ws: Path) -> None:
    out = {"decision": "approve", **specific(permissionDecision="ask")}
    runner = hooks.add("PreToolUse", "", reply(ws, out)).runner()
    result = await runner.pre_tool_use("Read", {"file_path": "a"}, call_id="c1")
    assert result.decision == "ask"


async def test_continue_false_denies_the_call(hooks: Hooks, ws: Path) -> None:
    out = {"continue": False, "stopReason": "maintenance window"}
    runner = hooks.add("PreToolUse", "", reply(ws, out)).runner()
    result = await runner.pre_tool_use("Read", {"file_path": "a"}, call_id="c1")
    assert (result.decision, result.reason, result.stop) == ("deny", "maintenance window", True)


async def test_missing_hook_event_name_is_accepted(hooks: Hooks, ws: Path) -> None:
    out = {"hookSpecificOutput": {"permissionDecision": "deny"}}
    runner = hooks.add("PreToolUse", "", reply(ws, out)).runner()
    result = await runner.pre_tool_use("Read", {"file_path": "a"}, call_id="c1")
    assert result.decision == "deny"


@pytest.mark.parametrize(
    ("decisions", "expected"),
    [
        (["allow", "ask"], "ask"),
        (["ask", "defer"], "defer"),
        (["allow", "deny", "defer"], "deny"),
        (["allow", "allow"], "allow"),
    ],
)
async def test_concurrent_hooks_merge_deny_defer_ask_allow(
    hooks: Hooks, ws: Path, decisions: list[str], expected: str
) -> None:
    commands = [
        reply(ws, specific(permissionDecision=d, permissionDecisionReason=f"{i}:{d}"))
        for i, d in enumerate(decisions)
    ]
    # distinct commands (identical ones would run once)
    commands = [f"{c} # {i}" for i, c in enumerate(commands)]
    runner = hooks.add("PreToolUse", "Bash", *commands).runner()
    result = await runner.pre_tool_use("Bash", {"command": "ls"}, call_id="c1")
    assert result.decision == expected
    first = decisions.index(expected)
    assert result.reason == f"{first}:{expected}"
    assert result.decided_by is not None and result.decided_by.command == commands[first]


async def test_exit_2_and_json_allow_from_two_hooks_deny(hooks: Hooks, ws: Path) -> None:
    allow = reply(ws, specific(permissionDecision="allow"))
    runner = hooks.add("PreToolUse", "", allow, "echo stop >&2; exit 2").runner()
    result = await runner.pre_tool_use("Read", {"file_path": "a"}, call_id="c1")
    assert (result.decision, result.reason) == ("deny", "stop")


def _run(decision: str | None, *, reason: str = "", updated: dict[str, Any] | None = None,
         n: int = 0) -> HookRun:
    return HookRun(
        event="PreToolUse",
        command=f"hook-{n}",
        source=f"toolrun.yaml:{n}",
        matcher="",
        outcome="success",
        duration_ms=1,
        exit_code=0,
        decision=decision,  # type: ignore[arg-type]
        reason=reason or None,
        updated_input=updated,
    )


def test_merge_pre_tool_use_pure() -> None:
    runs = [
        _run("allow", reason="a", updated={"command": "one"}, n=1),
        _run(None, updated={"command": "two"}, n=2),
        _run("ask", reason="b", n=3),
        _run("ask", reason="c", n=4),
    ]
    merged = merge_pre_tool_use(runs)
    assert (merged.decision, merged.reason) == ("ask", "b")
    assert merged.decided_by is not None and merged.decided_by.command == "hook-3"
    assert merged.updated_input == {"command": "two"}
    assert merge_pre_tool_use([]).decision is None
