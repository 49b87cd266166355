"""Each exit-code path of the protocol, with real hook processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hooks.conftest import Hooks, py_hook, script

pytestmark = pytest.mark.anyio

BASH = {"command": "npm test"}


async def test_exit_0_plain_text_is_success_without_decision(hooks: Hooks) -> None:
    runner = hooks.add("PreToolUse", "Bash", "echo 'looks fine to me'; echo noise >&2").runner()
    result = await runner.pre_tool_use("Bash", BASH, call_id="c1")
    (run,) = result.runs
    assert (run.outcome, run.exit_code, run.decision, run.error) == ("success", 0, None, None)
    assert result.decision is None and result.updated_input is None


async def test_exit_0_json_decides(hooks: Hooks, ws: Path) -> None:
    command = py_hook(ws, "allow.py", """
import json, sys
json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "permissionDecision": "allow", "permissionDecisionReason": "tests are safe"}}))
""")
    result = await hooks.add("PreToolUse", "Bash", command).runner().pre_tool_use(
        "Bash", BASH, call_id="c1"
    )
    assert result.decision == "allow"
    assert result.reason == "tests are safe"
    assert result.decided_by is not None and result.decided_by.command == command
    assert result.decided_by.source == f"{hooks.file}:11"


async def test_json_after_leading_whitespace_is_json(hooks: Hooks) -> None:
    command = """printf '\\n   {"decision": "block", "reason": "legacy"}\\n'"""
    result = await hooks.add("PreToolUse", "", command).runner().pre_tool_use(
        "Bash", BASH, call_id="c1"
    )
    assert (result.decision, result.reason) == ("deny", "legacy")


async def test_exit_2_blocks_with_stderr_as_reason(hooks: Hooks, ws: Path) -> None:
    guard = script(ws, "guard.sh", """#!/bin/sh
cat >/dev/null
echo "pushing is not allowed here" >&2
exit 2
""")
    result = await hooks.add("PreToolUse", "Bash", str(guard)).runner().pre_tool_use(
        "Bash", BASH, call_id="c1"
    )
    (run,) = result.runs
    assert (run.outcome, run.exit_code, run.decision) == ("blocking_error", 2, "deny")
    assert result.decision == "deny"
    assert result.reason == "pushing is not allowed here"


async def test_exit_2_ignores_json_even_an_allow(hooks: Hooks) -> None:
    command = (
        """echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'; """
        "echo no >&2; exit 2"
    )
    result = await hooks.add("PreToolUse", "Bash", command).runner().pre_tool_use(
        "Bash", BASH, call_id="c1"
    )
    assert (result.decision, result.reason) == ("deny", "no")


@pytest.mark.parametrize("failure", ["open", "closed"])
async def test_exit_1_is_a_non_blocking_error_in_both_modes(hooks: Hooks, failure: str) -> None:
    runner = hooks.add("PreToolUse", "Bash", "echo 'lint crashed' >&2; exit 1").runner(
        failure=failure
    )
    result = await runner.pre_tool_use("Bash", BASH, call_id="c1")
    (run,) = result.runs
    assert (run.outcome, run.exit_code, run.decision, run.failure) == (
        "non_blocking_error",
        1,
        None,
        None,
    )
    assert run.error == "exit code 1: lint crashed"
    assert result.decision is None


async def test_missing_script_open_is_recorded_and_runs_on(hooks: Hooks) -> None:
    result = await hooks.add("PreToolUse", "Bash", "./hooks/missing-guard.sh").runner().pre_tool_use(
        "Bash", BASH, call_id="c1"
    )
    (run,) = result.runs
    assert (run.exit_code, run.failure, run.outcome) == (127, "not_found", "non_blocking_error")
    assert run.error is not None and "127" in run.error
    assert result.decision is None


async def test_missing_script_closed_denies_naming_the_hook(hooks: Hooks) -> None:
    runner = hooks.add("PreToolUse", "Bash", "./hooks/missing-guard.sh").runner(failure="closed")
    result = await runner.pre_tool_use("Bash", BASH, call_id="c1")
    assert result.decision == "deny"
    assert result.reason is not None
    assert "./hooks/missing-guard.sh" in result.reason
    assert f"{hooks.file}:11" in result.reason
    assert "hookFailure: closed" in result.reason
    assert result.runs[0].outcome == "blocking_error"


async def test_not_executable_script_is_a_failure(hooks: Hooks, ws: Path) -> None:
    path = ws / "guard.sh"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o644)
    result = await hooks.add("PreToolUse", "Bash", str(path)).runner(failure="closed").pre_tool_use(
        "Bash", BASH, call_id="c1"
    )
    assert result.runs[0].failure == "not_executable"
    assert result.decision == "deny"


@pytest.mark.parametrize("failure", ["open", "closed"])
async def test_crash_by_signal(hooks: Hooks, failure: str) -> None:
    runner = hooks.add("PreToolUse", "Bash", "kill -9 $$").runner(failure=failure)
    result = await runner.pre_tool_use("Bash", BASH, call_id="c1")
    (run,) = result.runs
    assert (run.signal, run.exit_code, run.failure) == (9, 137, "crash")
    if failure == "open":
        assert run.outcome == "non_blocking_error" and result.decision is None
    else:
        assert run.outcome == "blocking_error" and result.decision == "deny"
        assert result.reason is not None and "signal 9" in result.reason


async def test_a_crashed_python_hook_reported_by_the_shell(hooks: Hooks, ws: Path) -> None:
    command = py_hook(ws, "abort.py", "import os\nos.abort()\n") + "; exit $?"
    result = await hooks.add("PreToolUse", "Bash", command).runner(failure="closed").pre_tool_use(
        "Bash", BASH, call_id="c1"
    )
    assert result.runs[0].failure == "crash"
    assert result.decision == "deny"


async def test_non_json_output_is_plain_text(hooks: Hooks) -> None:
    runner = hooks.add("PreToolUse", "Bash", "echo 'result: {\"decision\": \"block\"}'").runner(
        failure="closed"
    )
    result = await runner.pre_tool_use("Bash", BASH, call_id="c1")
    assert result.runs[0].outcome == "success"
    assert result.decision is None


@pytest.mark.parametrize(
    ("stdout", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"decision": "approve"} trailing', "not valid JSON"),
        ('{"hookSpecificOutput": {"permissionDecision": "maybe"}}', "permissionDecision"),
        ('{"hookSpecificOutput": {"updatedInput": "rm -rf /"}}', "updatedInput"),
        ('{"hookSpecificOutput": []}', "hookSpecificOutput"),
        ('{"hookSpecificOutput": {"hookEventName": "PostToolUse"}}', "hookEventName"),
        ('{"decision": "allow"}', "decision"),
    ],
)
async def test_invalid_json(hooks: Hooks, ws: Path, stdout: str, message: str) -> None:
    (ws / "out.txt").write_text(stdout)
    hooks.add("PreToolUse", "Bash", "cat out.txt")
    opened = await hooks.runner().pre_tool_use("Bash", BASH, call_id="c1")
    (run,) = opened.runs
    assert (run.outcome, run.failure, opened.decision) == (
        "non_blocking_error",
        "invalid_json",
        None,
    )
    assert run.error is not None and message in run.error
    closed = await hooks.runner(failure="closed").pre_tool_use("Bash", BASH, call_id="c1")
    assert closed.decision == "deny"
    assert closed.reason is not None and "cat out.txt" in closed.reason
    assert closed.runs[0].failure == "invalid_json"


async def test_run_records_are_json(hooks: Hooks) -> None:
    runner = hooks.add("PreToolUse", "Bash", "exit 2", "exit 0").runner()
    result = await runner.pre_tool_use("Bash", BASH, call_id="c1")
    data = json.loads(json.dumps(result.to_json()))
    assert [r["exit_code"] for r in data["runs"]] == [2, 0]
    assert set(data["runs"][0]) >= {
        "event",
        "command",
        "source",
        "exit_code",
        "duration_ms",
        "decision",
        "outcome",
        "timed_out",
        "error",
    }
    assert data["runs"][0]["decision"] == "deny"
    assert isinstance(data["runs"][1]["duration_ms"], int)

