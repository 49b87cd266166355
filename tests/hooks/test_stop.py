"""``continue: false`` (and a PostToolBatch block) stops the run (#30).

Every test is a real ``toolrun exec`` process with real hook scripts shaped like the
public ones (read the event on stdin, print Claude Code's JSON); the later calls must
each get a result that says the run was stopped, and must not have run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.hooks.conftest import PY, hooks_yaml, journal, toolrun_exec

#: prints ``$ANSWER`` (JSON) when the event's text holds ``$WHEN``, then exits ``$CODE``
STOPPER = """
import json, os, sys
event = json.load(sys.stdin)
if os.environ["WHEN"] in json.dumps(event):
    print(os.environ["ANSWER"])
    sys.exit(int(os.environ.get("CODE", "0")))
"""

STOP = {"continue": False, "stopReason": "the build is red: fix it first"}


def hook(ws: Path, when: str, answer: Any, code: int = 0) -> str:
    script = ws.parent / "stopper.py"
    script.write_text(STOPPER)
    env = f"WHEN={json.dumps(when)} ANSWER={json.dumps(json.dumps(answer))} CODE={code}"
    return f"env {env} {PY} {script}"


def bash(command: str) -> dict[str, Any]:
    return {"tool": "Bash", "input": {"command": command}}


ALLOW = "permissions: {allow: [Bash, Read, Write]}\n"


def later_calls(ws: Path) -> list[list[dict[str, Any]]]:
    """A second and third turn whose calls would leave files behind."""
    return [
        [bash("touch later-1.txt")],
        [{"tool": "Write", "input": {"file_path": "later-2.txt", "content": "x"}}],
    ]


def assert_stopped(ws: Path, results: list[dict[str, Any]], event: str, first: int) -> None:
    """Every result from ``first`` on says the run was stopped by ``event``'s hook."""
    assert results[first:], "the stopped calls must each have a result"
    for r in results[first:]:
        assert r["status"] == "interrupted" and r["aborted_before_launch"] is True
        assert r["decided_by"]["kind"] == "stop"
        assert f"stopped by {event} hook" in r["error"] and "did not run" in r["error"]
    assert not (ws / "later-1.txt").exists() and not (ws / "later-2.txt").exists()
    records = journal(ws)
    (stop,) = [r for r in records if r["event"] == "hook_stop"]
    assert stop["event"] == "hook_stop" and records[-1]["stopped"]["event"] == event


def test_post_tool_use_continue_false_stops_every_later_call(ws: Path) -> None:
    config = hooks_yaml("PostToolUse", "Bash", hook(ws, "echo first", STOP), extra=ALLOW)
    code, results, stderr = toolrun_exec(
        ws, config, [[bash("echo first")], *later_calls(ws)], turns=True
    )
    assert code == 6  # ExitCode.HOOK_STOPPED
    assert results[0]["status"] == "ok" and results[0]["output"] == "first\n"
    assert_stopped(ws, results, "PostToolUse", 1)
    assert all("the build is red: fix it first" in r["error"] for r in results[1:])
    assert "stopped by PostToolUse hook" in stderr and "the build is red" in stderr


@pytest.mark.parametrize(
    ("event", "matcher", "when", "answer", "code", "first", "calls"),
    [
        # PreToolUse: continue false wins over its allow; the call itself does not run
        ("PreToolUse", "Bash", "touch first", {
            **STOP, "hookSpecificOutput": {"hookEventName": "PreToolUse",
                                           "permissionDecision": "allow"}}, 0, 1,
         [[bash("touch first.txt")]]),
        # PostToolUseFailure: after a command that failed
        ("PostToolUseFailure", "Bash", "exit 3", STOP, 0, 1, [[bash("exit 3")]]),
        # PermissionRequest: a deny with interrupt: true stops the agent
        ("PermissionRequest", "Edit", "asked.txt", {"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "no", "interrupt": True}}}, 0, 1,
         [[{"tool": "Edit", "input": {"file_path": "asked.txt", "old_string": "a",
                                      "new_string": "b"}}]]),
        # PostToolBatch: exit 2, decision block and continue false all stop before the next
        ("PostToolBatch", "", "PostToolBatch", "", 2, 2, None),
        ("PostToolBatch", "", "PostToolBatch", {"decision": "block", "reason": "red"}, 0, 2,
         None),
        ("PostToolBatch", "", "PostToolBatch", STOP, 0, 2, None),
        # SessionStart: nothing runs at all
        ("SessionStart", "startup", "startup", STOP, 0, 0, [[bash("touch first.txt")]]),
    ],
    ids=["pre-tool-use", "post-tool-use-failure", "permission-request-interrupt",
         "batch-exit-2", "batch-decision-block", "batch-continue-false", "session-start"],
)
def test_every_event_that_runs_in_a_plan_can_stop_it(
    ws: Path, event: str, matcher: str, when: str, answer: Any, code: int, first: int,
    calls: list[list[dict[str, Any]]] | None,
) -> None:
    (ws / "a.txt").write_text("a\n")
    (ws / "b.txt").write_text("b\n")
    if calls is None:  # a concurrent run of two reads: one batch
        calls = [[{"tool": "Read", "input": {"file_path": "a.txt"}},
                  {"tool": "Read", "input": {"file_path": "b.txt"}}]]
    perms = "permissions: {allow: [Bash, Read, 'Write(./later-2.txt)']}\n"
    config = hooks_yaml(event, matcher, hook(ws, when, answer, code), extra=perms)
    exit_code, results, _err = toolrun_exec(ws, config, [*calls, *later_calls(ws)], turns=True)
    assert exit_code == 6
    assert not (ws / "first.txt").exists()
    if event in ("PreToolUse", "PermissionRequest"):  # the call whose hook stopped: denied
        assert results[0]["status"] == "denied"
    assert_stopped(ws, results, event, first)


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ({"continue": True, "stopReason": "only a note"}, 0),  # continue true: no stop
        ({"stopReason": "a reason without continue: false"}, 0),
        (STOP, 1),  # JSON is read on exit 0 only: exit 1 with continue false is no stop
        ({"continue": "false"}, 0),  # not a boolean: invalid output, no stop
    ],
    ids=["continue-true", "reason-only", "exit-1", "string-false"],
)
def test_what_is_not_a_stop_runs_on(ws: Path, answer: Any, code: int) -> None:
    config = hooks_yaml("PostToolUse", "Bash", hook(ws, "echo first", answer, code), extra=ALLOW)
    exit_code, results, _err = toolrun_exec(
        ws, config, [[bash("echo first")], *later_calls(ws)], turns=True
    )
    assert exit_code == 0, results
    assert [r["status"] for r in results] == ["ok", "ok", "ok"]
    assert (ws / "later-1.txt").exists() and (ws / "later-2.txt").exists()
    assert not [r for r in journal(ws) if r["event"] == "hook_stop"]


def test_a_stop_in_a_concurrent_run_keeps_its_siblings_from_starting(ws: Path) -> None:
    # PreToolUse hooks of a run all answer before any of its calls starts
    (ws / "a.txt").write_text("a\n")
    config = hooks_yaml("PreToolUse", "Read", hook(ws, "b.txt", STOP), extra=ALLOW)
    reads = [{"tool": "Read", "input": {"file_path": name}} for name in ("a.txt", "b.txt")]
    code, results, _err = toolrun_exec(ws, config, [reads, *later_calls(ws)], turns=True)
    assert code == 6
    assert results[0]["status"] == "interrupted" and results[0]["decided_by"]["kind"] == "stop"
    assert results[1]["status"] == "denied" and "the build is red" in results[1]["error"]
    assert_stopped(ws, results, "PreToolUse", 2)
