"""What `toolrun hook` does with what it cannot decide: exit 1 and a message (a
non-blocking error for Claude Code and Gemini CLI), or a deny with --fail closed; never
a traceback, never exit 2 (which an agent reads as "block")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hook.conftest import Hook, payload

BAD = [
    (b"", "toolrun hook: stdin is empty: expected the hook's JSON payload"),
    (b"   \n", "toolrun hook: stdin is empty: expected the hook's JSON payload"),
    (b"{not json", ("toolrun hook: stdin is not JSON: Expecting property name enclosed in double "
     "quotes (line 1, column 2)")),
    (b'{"tool_name": "Bash",\n "tool_input": {"command": "ls"}', ("toolrun hook: stdin is not "
     "JSON: Expecting ',' delimiter (line 2, column 33)")),
    (b"\xff\xfe{}", "toolrun hook: stdin is not UTF-8 text"),
    (b"[1, 2]", "toolrun hook: the payload must be a JSON object, not list"),
    (b'"Bash"', "toolrun hook: the payload must be a JSON object, not str"),
    (b"[" * 100_000, "toolrun hook: stdin is JSON nested too deeply"),
    (b'{"hook_event_name": "PreToolUse", "tool_input": {}}',
     "toolrun hook: the payload has no tool_name"),
    (b'{"tool_name": "", "tool_input": {}}', "toolrun hook: the payload has no tool_name"),
    (b'{"tool_name": 7, "tool_input": {}}', "toolrun hook: tool_name must be a string, not int"),
    (b'{"tool_name": "Bash", "tool_input": "ls"}',
     "toolrun hook: tool_input must be an object, not str"),
    (b'{"tool_name": "Bash", "tool_input": {}, "cwd": ["/"]}',
     "toolrun hook: cwd must be a string, not list"),
    (b'{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {}}',
     ("toolrun hook: hook_event_name 'PostToolUse' is not a tool event it answers "
     "(PreToolUse, PermissionRequest, SessionStart, SessionEnd); register it under those events only")),
    (b'{"hook_event_name": "Stop"}', ("toolrun hook: hook_event_name 'Stop' is not a tool event "
     "it answers (PreToolUse, PermissionRequest, SessionStart, SessionEnd); register it under those "
     "events only")),
]


@pytest.mark.parametrize(("stdin", "message"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_payloads_exit_1_with_a_message(hook: Hook, stdin: bytes, message: str) -> None:
    done = hook(stdin)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", message + "\n")


@pytest.mark.parametrize(("stdin", "message"), BAD[:6], ids=[str(i) for i in range(6)])
def test_fail_closed_answers_deny(hook: Hook, stdin: bytes, message: str) -> None:
    done = hook(stdin, "--fail", "closed")
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "toolrun could not decide this call (--fail closed): "
            + message,
        }
    }
    assert done.stderr == message + "\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "toolrun hook: No such option '--bogus'."),
        (["--format", "codex"], ("toolrun hook: Invalid value for '--format': 'codex' is not one "
         "of 'claude', 'gemini'.")),
        (["--fail"], "toolrun hook: Option '--fail' requires an argument."),
        (["extra"], "toolrun hook: Got unexpected extra argument (extra)"),
    ],
)
def test_a_bad_option_is_exit_1_not_2(hook: Hook, ws: Path, args: list[str], message: str) -> None:
    done = hook(payload(ws, "Bash", {"command": "rm -rf x"}), *args)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", message + "\n")


def test_an_invalid_config_is_named_and_fails_open_or_closed(hook: Hook, ws: Path) -> None:
    (ws / "toolrun.yaml").write_text("permissions:\n  deny: [\"Bash(rm *)\"\n")
    data = payload(ws, "Bash", {"command": "rm -rf x"})
    done = hook(data)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("toolrun hook: ") and "toolrun.yaml:" in done.stderr
    assert "Traceback" not in done.stderr
    closed = hook(data, "--fail", "closed")
    out = json.loads(closed.stdout)["hookSpecificOutput"]
    assert closed.returncode == 0 and out["permissionDecision"] == "deny"
    assert "toolrun.yaml:" in out["permissionDecisionReason"]


def test_a_failing_rule_self_test_is_an_invalid_config(hook: Hook, ws: Path) -> None:
    """toolrun.examples are checked as `toolrun check` checks them."""
    example = "  examples:\n    - {call: 'Bash(npm test)', expect: deny}\n"
    text = (ws / "toolrun.yaml").read_text() + example
    (ws / "toolrun.yaml").write_text(text)
    done = hook(payload(ws, "Bash", {"command": "npm test"}))
    assert done.returncode == 1 and done.stdout == ""
    assert "expected deny, got allow" in done.stderr


def test_a_missing_workspace_fails_open(hook: Hook, ws: Path, tmp_path: Path) -> None:
    data = payload(ws, "Bash", {"command": "ls"}, cwd=str(tmp_path / "gone"))
    done = hook(data)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"toolrun hook: the workspace {tmp_path / 'gone'} is not a directory\n"


def test_a_journal_that_cannot_be_written_keeps_the_decision(hook: Hook, ws: Path) -> None:
    (ws / ".toolrun").write_text("not a directory")
    done = hook(payload(ws, "Bash", {"command": "rm -rf x"}))
    assert done.returncode == 0
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert done.stderr.startswith("toolrun hook: decision not journalled: ")


@pytest.mark.parametrize(
    ("tool", "tool_input", "why"),
    [
        ("Bash", {"command": 5}, ("input command cannot be analysed (command is missing or not "
         "a string)")),
        ("Bash", {}, "input command cannot be analysed (command is missing or not a string)"),
        ("Bash", {"command": "ls\u0000x"}, "(the command contains control characters)"),
        ("Read", {"file_path": ["a"]}, ("input file_path cannot be analysed (file_path is "
         "missing or not a non-empty string)")),
        ("Edit", {"file_path": ""}, "input file_path cannot be analysed"),
    ],
)
def test_an_input_the_engine_cannot_read_asks(
    hook: Hook, ws: Path, tool: str, tool_input: dict[str, object], why: str
) -> None:
    """Not toolrun's error, the call's: it is decided, and fails closed (ask)."""
    done = hook(payload(ws, tool, tool_input))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "ask"
    assert why in out["permissionDecisionReason"]
