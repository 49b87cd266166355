"""`toolrun hook` answering Gemini CLI's BeforeTool hook (docs/hooks/reference: input
``tool_name``/``tool_input`` in Gemini's tool names; output ``decision`` and ``reason``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.hook.conftest import Hook, answer


def before_tool(ws: Path, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "session_id": "gem-1",
        "transcript_path": str(ws / "chat.json"),
        "cwd": str(ws),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-12-01T22:00:00.000Z",
        "tool_name": tool,
        "tool_input": tool_input,
    }


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("run_shell_command", {"command": "rm -rf build", "description": "clean"},
         {"decision": "deny",
          "reason": "toolrun: denied: deny rule Bash(rm *) (toolrun.yaml:11) matches "
          "`rm -rf build`"}),
        ("run_shell_command", {"command": "git push origin main"},
         {"decision": "ask",
          "reason": "toolrun: needs approval: ask rule Bash(git push *) (toolrun.yaml:8) "
          "matches `git push origin main`"}),
        ("run_shell_command", {"command": "npm test"},
         {"decision": "allow",
          "reason": "toolrun: allowed: allow rule Bash(npm test) (toolrun.yaml:3) matches "
          "`npm test`"}),
        ("run_shell_command", {"command": "git status"}, {}),
        ("read_file", {"file_path": "{ws}/.env"},
         {"decision": "deny",
          "reason": "toolrun: denied: deny rule Read(./.env) (toolrun.yaml:12) matches "
          "file_path {ws}/.env"}),
        ("read_file", {"absolute_path": "{ws}/.env"},  # the older field name
         {"decision": "deny",
          "reason": "toolrun: denied: deny rule Read(./.env) (toolrun.yaml:12) matches "
          "file_path {ws}/.env"}),
        ("write_file", {"file_path": "{ws}/secrets/k", "content": "x"},
         {"decision": "deny",
          "reason": "toolrun: denied: deny rule Edit(secrets/**) (.claude/settings.json:12) "
          "matches file_path {ws}/secrets/k"}),
        ("replace", {"file_path": "{ws}/config/a.yml", "old_string": "a", "new_string": "b"},
         {"decision": "ask",
          "reason": "toolrun: needs approval: ask rule Edit(config/**) (toolrun.yaml:9) "
          "matches file_path {ws}/config/a.yml"}),
        ("web_fetch", {"prompt": "Summarise https://docs.python.org/3/ and "
                                 "https://evil.example/x please"},
         {"decision": "deny",
          "reason": "toolrun: denied: deny rule WebFetch(domain:evil.example) "
          "(toolrun.yaml:13) matches url https://evil.example/x"}),
        ("mcp__memory__delete_entities", {"entityNames": ["a"]},
         {"decision": "deny",
          "reason": "toolrun: denied: deny rule mcp__memory__delete_entities (toolrun.yaml:14) "
          "matches tool mcp__memory__delete_entities"}),
    ],
)
def test_before_tool_gets_gemini_json(
    hook: Hook, ws: Path, tool: str, tool_input: dict[str, Any], expected: dict[str, Any]
) -> None:
    given = {k: v.replace("{ws}", str(ws)) if isinstance(v, str) else v
             for k, v in tool_input.items()}
    done = hook(before_tool(ws, tool, given))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        k: v.replace("{ws}", str(ws)) for k, v in expected.items()
    }


def test_a_shell_commands_directory_is_where_it_is_decided(hook: Hook, ws: Path) -> None:
    data = before_tool(ws, "run_shell_command", {"command": "cat ../.env", "directory": "src"})
    assert answer(hook(data))["decision"] == "deny"


def test_format_gemini_is_forced_and_fails_closed_in_its_shape(hook: Hook, ws: Path) -> None:
    done = hook(b"{oops", "--format", "gemini", "--fail", "closed")
    assert done.returncode == 0
    out = json.loads(done.stdout)
    assert out["decision"] == "deny"
    assert out["reason"].startswith("toolrun could not decide this call (--fail closed): ")
    # a Claude Code event under --format gemini is refused, not misread
    claude = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}
    wrong = hook(claude, "--format", "gemini")
    assert wrong.returncode == 1
    assert (
        "hook_event_name 'PreToolUse' is not a tool event it answers (BeforeTool, SessionStart, SessionEnd)"
        in wrong.stderr
    )


def test_the_journal_names_gemini_and_its_tool(hook: Hook, ws: Path) -> None:
    answer(hook(before_tool(ws, "run_shell_command", {"command": "rm -rf x"})))
    lines = (ws / ".toolrun" / "runs" / "session-gem-1.jsonl").read_text().splitlines()
    first, result = (json.loads(line) for line in lines)
    assert first["plans"] == ["Gemini CLI session gem-1"]
    assert result["tool"] == "Bash"
    assert result["metadata"]["agent_tool"] == "run_shell_command"
