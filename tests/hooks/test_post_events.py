"""PostToolUse, PostToolUseFailure and PostToolBatch with real hooks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hooks.conftest import Hooks, py_hook
from toolrun.hooks import BatchCall

pytestmark = pytest.mark.anyio

ECHO_INPUT = """
import json, sys
data = json.load(sys.stdin)
with open(sys.argv[1], "w") as f:
    json.dump(data, f)
"""


async def test_post_tool_use_input_and_output_fields(hooks: Hooks, ws: Path) -> None:
    record = py_hook(ws, "record.py", ECHO_INPUT) + " post.json"
    reply = json.dumps(
        {
            "decision": "block",
            "reason": "formatting is off",
            "systemMessage": "reformatted",
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "ran black",
                "updatedToolOutput": {"filePath": "a.py", "success": True, "note": "fmt"},
            },
        }
    )
    hooks.add("PostToolUse", "Write|Edit", record, f"echo '{reply}'")
    runner = hooks.runner()
    response = {"filePath": "a.py", "success": True}
    result = await runner.post_tool_use(
        "Write", {"file_path": "a.py", "content": "x"}, response, call_id="w1"
    )
    seen = json.loads((ws / "post.json").read_text())
    assert seen["hook_event_name"] == "PostToolUse"
    assert seen["tool_response"] == response
    assert seen["tool_use_id"] == "w1" and seen["tool_name"] == "Write"
    assert result.blocked and result.reason == "formatting is off"
    assert result.additional_context == ("ran black",)
    assert result.updated_tool_output == {"filePath": "a.py", "success": True, "note": "fmt"}
    assert result.system_messages == ("reformatted",)
    assert result.decided_by is not None and result.decided_by.source == f"{hooks.file}:12"
    assert json.loads(json.dumps(result.to_json()))["blocked"] is True


async def test_post_tool_use_exit_2_is_a_block_with_stderr(hooks: Hooks) -> None:
    runner = hooks.add("PostToolUse", "", "echo 'tests now fail' >&2; exit 2").runner()
    result = await runner.post_tool_use("Bash", {"command": "x"}, "out", call_id="c1")
    assert result.blocked and result.reason == "tests now fail"
    assert result.runs[0].decision == "block"


async def test_post_tool_use_closed_failure_blocks(hooks: Hooks) -> None:
    runner = hooks.add("PostToolUse", "", ("sleep 60", {"timeout": 0.3})).runner(failure="closed")
    result = await runner.post_tool_use("Bash", {"command": "x"}, "out", call_id="c1")
    assert result.blocked and result.reason is not None and "timed out" in result.reason


async def test_post_tool_use_sequential_chains_the_output(hooks: Hooks, ws: Path) -> None:
    upper = py_hook(ws, "upper.py", """
import json, sys
data = json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
    "updatedToolOutput": data["tool_response"] + sys.argv[1]}}))
""")
    hooks.add("PostToolUse", "Bash", f"{upper} -a", f"{upper} -b", sequential=True)
    result = await hooks.runner().post_tool_use("Bash", {"command": "x"}, "out", call_id="c1")
    assert result.updated_tool_output == "out-a-b"


async def test_post_tool_use_failure_gets_the_error(hooks: Hooks, ws: Path) -> None:
    record = py_hook(ws, "record.py", ECHO_INPUT) + " fail.json"
    context = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure",
                                "additionalContext": "try --verbose"}}
    )
    hooks.add("PostToolUseFailure", "Bash", record, f"echo '{context}'")
    hooks.add("PostToolUse", "Bash", "touch wrong-event.flag")
    result = await hooks.runner().post_tool_use_failure(
        "Bash", {"command": "make"}, "Exit code 2\nmake: *** no rule", call_id="c9"
    )
    seen = json.loads((ws / "fail.json").read_text())
    assert seen["hook_event_name"] == "PostToolUseFailure"
    assert seen["error"] == "Exit code 2\nmake: *** no rule"
    assert "tool_response" not in seen
    assert result.additional_context == ("try --verbose",)
    assert not result.blocked
    assert not (ws / "wrong-event.flag").exists()


async def test_post_tool_batch_gets_every_call_and_ignores_matchers(
    hooks: Hooks, ws: Path
) -> None:
    record = py_hook(ws, "record.py", ECHO_INPUT) + " batch.json"
    hooks.add("PostToolBatch", "NoSuchTool", (record, {"if": "Bash(git *)"}))
    hooks.add("PostToolBatch", "", """echo '{"decision": "block", "reason": "too many reads"}'""")
    calls = [
        BatchCall("Read", {"file_path": "a"}, "c1", "contents of a"),
        BatchCall("Grep", {"pattern": "x"}, "c2", {"matches": 0}),
    ]
    result = await hooks.runner().post_tool_batch(calls, cwd=ws)
    seen = json.loads((ws / "batch.json").read_text())
    assert seen["hook_event_name"] == "PostToolBatch"
    assert seen["session_id"] == "run-test"
    assert seen["tool_calls"] == [
        # the path absolute, as Claude Code sends it (#30)
        {"tool_name": "Read", "tool_input": {"file_path": str(ws / "a")}, "tool_use_id": "c1",
         "tool_response": "contents of a"},
        {"tool_name": "Grep", "tool_input": {"pattern": "x"}, "tool_use_id": "c2",
         "tool_response": {"matches": 0}},
    ]
    assert "tool_name" not in seen
    assert result.event == "PostToolBatch"
    assert result.blocked and result.reason == "too many reads"
    assert len(result.runs) == 2


async def test_post_events_without_hooks_are_empty(hooks: Hooks) -> None:
    runner = hooks.runner()
    result = await runner.post_tool_use("Bash", {"command": "x"}, "out", call_id="c1")
    assert (result.blocked, result.runs, result.updated_tool_output) == (False, (), None)
