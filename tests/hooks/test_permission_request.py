"""PermissionRequest hooks answer asks before the prompt or --ask; hook types toolrun cannot
run (``prompt``, ``agent``) load with a located warning and give no decision.

Every test is a real ``toolrun exec`` with real hook scripts, then a look at the disk.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main

ANSWER = """
import json, sys
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(event) + "\\n")
answer = json.loads(sys.argv[2])
if answer == "exit2":
    sys.stderr.write("not in CI\\n")
    sys.exit(2)
if answer is not None:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                             "decision": answer}}))
"""


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "answer.py").write_text(ANSWER)
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    return ws


def setup(ws: Path, answer: object, extra: str = "") -> Path:
    """A PermissionRequest hook that logs its stdin and gives ``answer``; returns the log."""
    log = ws.parent / "seen.jsonl"
    command = f"{sys.executable} {ws.parent / 'answer.py'} {log} '{json.dumps(answer)}'"
    (ws / "toolrun.yaml").write_text(
        extra + "hooks:\n  PermissionRequest:\n"
        f"    - matcher: Write\n      hooks: [{{type: command, command: {json.dumps(command)}}}]\n"
    )
    return log


def run(runner: CliRunner, *calls: dict[str, object]) -> tuple[int, list[dict[str, object]]]:
    Path("plan.json").write_text(json.dumps({"calls": list(calls)}))
    result = runner.invoke(main, ["exec", "plan.json", "--format", "jsonl", "--ask", "deny"])
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


WRITE = {"tool": "Write", "input": {"file_path": "out.txt", "content": "hi\n"}}


def test_an_allow_approves_the_ask_without_the_prompt(runner: CliRunner, ws: Path) -> None:
    log = setup(ws, {"behavior": "allow"})
    code, (r,) = run(runner, WRITE)
    assert code == 0 and r["status"] == "ok"
    assert (ws / "out.txt").read_text() == "hi\n"
    assert r["decided_by"]["kind"] == "hook"
    (event,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert event["hook_event_name"] == "PermissionRequest"
    # the path absolute, as Claude Code sends it
    absolute = {**WRITE["input"], "file_path": str(ws.resolve() / "out.txt")}
    assert event["tool_name"] == "Write" and event["tool_input"] == absolute
    assert "tool_use_id" not in event
    # what "always" would add, as Claude Code offers it (a hook may echo it back)
    assert event["permission_suggestions"] == [{
        "type": "addRules", "rules": [{"toolName": "Edit", "ruleContent": "./out.txt"}],
        "behavior": "allow", "destination": "session",
    }]


def test_a_call_that_is_allowed_never_reaches_the_hook(runner: CliRunner, ws: Path) -> None:
    log = setup(ws, {"behavior": "deny"}, "permissions: {allow: [Write]}\n")
    code, (r,) = run(runner, WRITE)
    assert code == 0 and r["status"] == "ok" and not log.exists()


@pytest.mark.parametrize(
    "answer",
    [{"behavior": "deny", "message": "not in CI"}, "exit2"],
    ids=["json-deny", "exit-2"],
)
def test_a_deny_denies(runner: CliRunner, ws: Path, answer: object) -> None:
    setup(ws, answer)
    code, (r,) = run(runner, WRITE)
    assert code == 4 and r["status"] == "denied" and not (ws / "out.txt").exists()
    assert "not in CI" in str(r["error"]) and "PermissionRequest hook" in str(r["error"])


@pytest.mark.parametrize("answer", [None, {"behavior": "ask"}, {}], ids=["silent", "bad", "empty"])
def test_no_answer_asks_as_usual(runner: CliRunner, ws: Path, answer: object) -> None:
    # --ask deny: without the hook's answer, nobody approves; a bad answer is no answer
    setup(ws, answer)
    code, (r,) = run(runner, WRITE)
    assert r["status"] in ("needs_approval", "denied") and not (ws / "out.txt").exists()
    assert code in (4, 5)


def test_updated_input_is_what_runs(runner: CliRunner, ws: Path) -> None:
    setup(ws, {"behavior": "allow", "updatedInput": {"file_path": "safe.txt", "content": "ok\n"}})
    code, (r,) = run(runner, WRITE)
    assert code == 0 and r["status"] == "ok"
    assert (ws / "safe.txt").read_text() == "ok\n" and not (ws / "out.txt").exists()
    assert r["input"] == {"file_path": "safe.txt", "content": "ok\n"}


@pytest.mark.parametrize(
    "rewrite",
    [
        {"file_path": "secret.txt", "content": "x"},  # a deny rule
        {"file_path": "../outside.txt", "content": "x"},  # outside the workspace
        {"file_path": "toolrun.yaml", "content": "x"},  # a protected path
        {"file_path": ".git/hooks/pre-commit", "content": "x"},  # a protected path
        {"path": "out.txt"},  # not valid Write input
    ],
    ids=["deny-rule", "outside", "config", "git-hook", "invalid"],
)
def test_a_rewrite_never_escapes_the_rules(
    runner: CliRunner, ws: Path, rewrite: dict[str, str]
) -> None:
    setup(ws, {"behavior": "allow", "updatedInput": rewrite}, "permissions: {deny: [Write(secret.txt)]}\n")
    (ws / ".git" / "hooks").mkdir(parents=True)
    config = (ws / "toolrun.yaml").read_text()
    code, (r,) = run(runner, WRITE)
    assert r["status"] in ("denied", "needs_approval") and code in (4, 5)
    assert not (ws / "secret.txt").exists() and not (ws.parent / "outside.txt").exists()
    assert not (ws / ".git" / "hooks" / "pre-commit").exists() and not (ws / "out.txt").exists()
    assert (ws / "toolrun.yaml").read_text() == config


def test_a_protected_path_is_never_approved_by_a_hook(runner: CliRunner, ws: Path) -> None:
    setup(ws, {"behavior": "allow"})
    (ws / ".git" / "hooks").mkdir(parents=True)
    code, (r,) = run(runner, {"tool": "Write", "input": {"file_path": ".git/hooks/pre-commit",
                                                          "content": "x"}})
    assert r["status"] == "needs_approval" and code == 5
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()


# ------------------------------------------------------------------ unsupported hook types

PROMPT_HOOKS = """hooks:
  PreToolUse:
    - matcher: Write
      hooks:
        - {type: prompt, prompt: "Is this write safe?"}
        - {type: agent, prompt: "Check it"}
"""


def test_a_prompt_hook_loads_with_a_located_warning_and_gives_no_decision(
    runner: CliRunner, ws: Path
) -> None:
    (ws / "toolrun.yaml").write_text("permissions: {allow: [Write]}\n" + PROMPT_HOOKS)
    Path("plan.json").write_text(json.dumps({"calls": [WRITE]}))
    result = runner.invoke(main, ["exec", "plan.json", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    assert (ws / "out.txt").read_text() == "hi\n"
    assert "toolrun.yaml:6" in result.stderr and "'prompt' hooks" in result.stderr
    assert "toolrun.yaml:7" in result.stderr and "'agent' hooks" in result.stderr
    (r,) = [json.loads(line) for line in result.stdout.splitlines()]
    runs = r["hooks"][0]["runs"]
    assert [run["failure"] for run in runs] == ["unsupported", "unsupported"]


def test_a_prompt_hook_denies_under_hook_failure_closed(runner: CliRunner, ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(
        "permissions: {allow: [Write]}\ntoolrun: {hookFailure: closed}\n" + PROMPT_HOOKS
    )
    code, (r,) = run(runner, WRITE)
    assert code == 4 and r["status"] == "denied" and not (ws / "out.txt").exists()
    assert "'prompt' hook" in str(r["error"])


def test_a_command_hook_still_needs_its_command(runner: CliRunner, ws: Path) -> None:
    (ws / "toolrun.yaml").write_text("hooks:\n  PreToolUse:\n    - hooks: [{type: command}]\n")
    Path("plan.json").write_text(json.dumps({"calls": [WRITE]}))
    result = runner.invoke(main, ["exec", "plan.json"])
    assert result.exit_code == 3 and "hooks.PreToolUse[0].hooks[0].command: empty or missing command" in result.output


def test_no_suggestion_is_offered_for_a_path_outside_the_workspace(
    runner: CliRunner, ws: Path
) -> None:
    log = setup(ws, None)
    code, (r,) = run(runner, {"tool": "Write", "input": {"file_path": "../out.txt", "content": "x"}})
    assert code != 0
    assert r["status"] != "ok" and not (ws.parent / "out.txt").exists()
    (event,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert event["permission_suggestions"] == []
