"""The protocol's pure parts: stdin objects, output shapes, outcome interpretation."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolrun.hooks import BatchCall, ProcessResult, build_input, interpret, parse_output
from toolrun.hooks.protocol import HookIdentity, encode_input

COMMON: dict[str, Any] = {"session_id": "run-1", "cwd": "/ws", "permission_mode": "default"}


def test_pre_tool_use_input() -> None:
    payload = build_input(
        "PreToolUse", **COMMON, tool_name="Read", tool_input={"file_path": "a"}, tool_use_id="c1"
    )
    assert payload == {
        **COMMON,
        "transcript_path": None,  # Claude Code always sends it; null when no journal is kept
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": "a"},
        "tool_use_id": "c1",
    }


def test_post_inputs() -> None:
    post = build_input("PostToolUse", **COMMON, tool_name="Read", tool_input={},
                       tool_use_id="c1", tool_response={"ok": True})
    assert post["tool_response"] == {"ok": True} and "error" not in post
    failure = build_input("PostToolUseFailure", **COMMON, tool_name="Bash", tool_input={},
                          tool_use_id="c1", error="Exit code 1")
    assert failure["error"] == "Exit code 1" and "tool_response" not in failure
    batch = build_input("PostToolBatch", **COMMON,
                        tool_calls=[BatchCall("Read", {"file_path": "a"}, "c1", "text")])
    assert batch["tool_calls"] == [
        {"tool_name": "Read", "tool_input": {"file_path": "a"}, "tool_use_id": "c1",
         "tool_response": "text"}
    ]
    assert "tool_name" not in batch


def test_encoding_non_json_values() -> None:
    @dataclass(frozen=True)
    class Output:
        path: Path
        lines: tuple[int, ...]

    payload = {"tool_response": Output(Path("/ws/a"), (1, 2)), "raw": b"bytes", "set": {3}}
    assert json.loads(encode_input(payload)) == {
        "tool_response": {"path": "/ws/a", "lines": [1, 2]},
        "raw": "bytes",
        "set": [3],
    }


def test_post_output_fields() -> None:
    out = parse_output(
        "PostToolUse",
        {"decision": "block", "reason": "r",
         "hookSpecificOutput": {"additionalContext": "c", "updatedMCPToolOutput": [1]}},
    )
    assert (out.decision, out.reason, out.additional_context, out.updated_tool_output) == (
        "block", "r", "c", [1]
    )
    assert parse_output("PostToolUse", {"decision": "approve"}).decision is None
    with pytest.raises(ValueError, match="decision"):
        parse_output("PostToolUse", {"decision": "deny"})
    with pytest.raises(ValueError, match="additionalContext"):
        parse_output("PostToolBatch", {"hookSpecificOutput": {"additionalContext": 3}})


def test_unknown_fields_are_ignored() -> None:
    out = parse_output("PreToolUse", {"suppressOutput": True, "future": {"x": 1}})
    assert out.decision is None


WHO = HookIdentity("PreToolUse", "guard", "toolrun.yaml:4", "Bash")


def result(code: int | None, stdout: str = "", stderr: str = "", **kw: object) -> ProcessResult:
    return ProcessResult(code, stdout, stderr, 5, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("code", "failure"),
    [(-11, "crash"), (134, "crash"), (137, "crash"), (127, "not_found"), (126, "not_executable"),
     (1, None), (3, None), (255, None)],
)
def test_exit_code_classes(code: int, failure: str | None) -> None:
    opened = interpret(WHO, result(code), failure_mode="open", timeout=1)
    assert (opened.failure, opened.outcome, opened.decision) == (
        failure, "non_blocking_error", None
    )
    closed = interpret(WHO, result(code), failure_mode="closed", timeout=1)
    assert closed.decision == ("deny" if failure else None)


def test_signal_is_reported() -> None:
    run = interpret(WHO, result(-15), failure_mode="open", timeout=1)
    assert (run.exit_code, run.signal) == (143, 15)
    assert run.error == "was killed by signal 15"


def test_spawn_error_and_timeout() -> None:
    spawn = interpret(WHO, result(None, spawn_error="No such file"), failure_mode="closed",
                      timeout=1)
    assert spawn.failure == "spawn_error" and spawn.decision == "deny"
    assert spawn.reason is not None and "guard" in spawn.reason and "toolrun.yaml:4" in spawn.reason
    late = interpret(WHO, result(None, timed_out=True), failure_mode="open", timeout=2.5)
    assert (late.failure, late.timed_out, late.error) == ("timeout", True, "timed out after 2.5 s")


def test_exit_2_without_stderr_uses_the_json_reason() -> None:
    run = interpret(WHO, result(2, '{"reason": "from json"}'), failure_mode="open", timeout=1)
    assert (run.decision, run.reason) == ("deny", "from json")
    bare = interpret(WHO, result(2), failure_mode="open", timeout=1)
    assert bare.decision == "deny" and bare.reason


def test_post_event_block_words() -> None:
    who = HookIdentity("PostToolUse", "fmt", "toolrun.yaml:9", "")
    assert interpret(who, result(2, stderr="x"), failure_mode="open", timeout=1).decision == "block"
    closed = interpret(who, result(127), failure_mode="closed", timeout=1)
    assert closed.decision == "block"
