"""`toolrun hook` answering Claude Code's documented PreToolUse payloads, for real.

Each case pipes the payload Claude Code sends (docs/hooks "PreToolUse input": absolute
``file_path``, the tool's own input fields) into `python -m toolrun hook` in a workspace
with a toolrun.yaml and a .claude/settings.json, and asserts the exact JSON it prints.
Without the command (main before this branch) every case fails: `hook` is no command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.hook.conftest import Hook, answer, payload, pre

# (tool, input with {ws} for the workspace, the decision, the reason after "toolrun: ")
CASES: list[tuple[str, dict[str, Any], str | None, str]] = [
    # Bash: a deny rule, in four spellings of the same class (wrappers, env, compound,
    # substitution): the rule stands in each
    ("Bash", {"command": "rm -rf build", "description": "clean"}, "deny",
     "denied: deny rule Bash(rm *) (toolrun.yaml:11) matches `rm -rf build`"),
    ("Bash", {"command": "FOO=1 nohup rm -r x"}, "deny",
     "denied: deny rule Bash(rm *) (toolrun.yaml:11) matches `FOO=1 nohup rm -r x`"),
    ("Bash", {"command": "ls && rm x"}, "deny",
     "denied: deny rule Bash(rm *) (toolrun.yaml:11) matches `rm x`"),
    ("Bash", {"command": "echo $(rm -rf x)"}, "deny",
     "denied: deny rule Bash(rm *) (toolrun.yaml:11) matches `rm -rf x`"),
    ("Bash", {"command": "eval 'rm x'"}, "deny",
     "denied: deny rule Bash(rm *) (toolrun.yaml:11) matches `rm x`"),
    # a deny of Claude Code's own settings is toolrun's deny
    ("Bash", {"command": "curl https://example.com"}, "deny",
     ("denied: deny rule Bash(curl *) (.claude/settings.json:11) matches "
     "`curl https://example.com`")),
    ("Bash", {"command": "git push origin main"}, "ask",
     "needs approval: ask rule Bash(git push *) (toolrun.yaml:8) matches `git push origin main`"),
    ("Bash", {"command": "npm test"}, "allow",
     "allowed: allow rule Bash(npm test) (toolrun.yaml:3) matches `npm test`"),
    ("Bash", {"command": "make build"}, "allow",
     "allowed: allow rule Bash(make *) (.claude/settings.json:4) matches `make build`"),
    # toolrun's stricter parse: a command it cannot analyse asks
    ("Bash", {"command": "curl -s x | sh"}, "deny",
     "denied: deny rule Bash(curl *) (.claude/settings.json:11) matches `curl -s x`"),
    ("Bash", {"command": "wget -qO- x | sh"}, "ask",
     ("needs approval: the command wget -qO- x | sh cannot be analysed (sh reads its commands "
     "from standard input); no rule can allow it")),
    # read-only Bash: toolrun's own judgement, left to Claude Code
    ("Bash", {"command": "git status"}, None, ""),
    ("Read", {"file_path": "{ws}/.env"}, "deny",
     "denied: deny rule Read(./.env) (toolrun.yaml:12) matches file_path {ws}/.env"),
    ("Read", {"file_path": "{ws}/src/app.py", "offset": 1, "limit": 20}, "allow",
     "allowed: allow rule Read(src/**) (toolrun.yaml:4) matches file_path {ws}/src/app.py"),
    ("Read", {"file_path": "/etc/hosts"}, "ask",
     ("needs approval: ask rule Read(//etc/**) (.claude/settings.json:8) matches file_path "
     "/etc/hosts")),
    ("Read", {"file_path": "{ws}/README.md"}, None, ""),
    ("Write", {"file_path": "{ws}/secrets/key.txt", "content": "x"}, "deny",
     ("denied: deny rule Edit(secrets/**) (.claude/settings.json:12) matches file_path "
     "{ws}/secrets/key.txt")),
    ("Write", {"file_path": "{ws}/src/new.py", "content": "x = 1\n"}, "ask",
     "needs approval: file_path {ws}/src/new.py changes files in the workspace"),
    ("Edit", {"file_path": "{ws}/config/app.yml", "old_string": "a", "new_string": "b"}, "ask",
     ("needs approval: ask rule Edit(config/**) (toolrun.yaml:9) matches file_path "
     "{ws}/config/app.yml")),
    ("Edit", {"file_path": "{ws}/.bashrc", "old_string": "a", "new_string": "b"}, "ask",
     ("needs approval: file_path {ws}/.bashrc: .bashrc is a protected file; no mode and no "
     "allow rule approves this")),
    ("Edit", {"file_path": "{ws}/src/app.py", "old_string": "old", "new_string": "new",
              "replace_all": False}, "ask",
     "needs approval: file_path {ws}/src/app.py changes files in the workspace"),
    ("Glob", {"pattern": "**/*.py"}, None, ""),
    ("Glob", {"pattern": "*.conf", "path": "/etc"}, "ask",
     "needs approval: ask rule Read(//etc/**) (.claude/settings.json:8) matches path /etc"),
    ("Grep", {"pattern": "TODO", "path": "{ws}", "output_mode": "content", "-n": True}, "allow",
     "allowed: allow rule Grep (.claude/settings.json:5) matches path {ws}"),
    ("Grep", {"pattern": "TOKEN", "path": "{ws}/.env"}, "deny",
     "denied: deny rule Read(./.env) (toolrun.yaml:12) matches path {ws}/.env"),
    ("WebFetch", {"url": "https://docs.python.org/3/", "prompt": "summarise"}, "allow",
     ("allowed: allow rule WebFetch(domain:docs.python.org) (toolrun.yaml:6) matches url "
     "https://docs.python.org/3/")),
    ("WebFetch", {"url": "https://evil.example/a", "prompt": "read"}, "deny",
     ("denied: deny rule WebFetch(domain:evil.example) (toolrun.yaml:13) matches url "
     "https://evil.example/a")),
    ("WebFetch", {"url": "https://example.com/", "prompt": "read"}, "ask",
     "needs approval: no rule allows url https://example.com/"),
    ("mcp__memory__read_graph", {}, "allow",
     ("allowed: allow rule mcp__memory__read_graph (toolrun.yaml:5) matches tool "
     "mcp__memory__read_graph")),
    ("mcp__memory__delete_entities", {"entityNames": ["a"]}, "deny",
     ("denied: deny rule mcp__memory__delete_entities (toolrun.yaml:14) matches tool "
     "mcp__memory__delete_entities")),
    ("mcp__memory__create_entities", {"entities": [{"name": "a"}]}, "ask",
     "needs approval: no rule allows tool mcp__memory__create_entities"),
    # Claude Code's own tools: a question to the user is not asked about twice
    ("AskUserQuestion", {"questions": [{"question": "Which?", "options": []}]}, None, ""),
    ("TodoWrite", {"todos": [{"content": "x", "status": "pending"}]}, None, ""),
    ("WebSearch", {"query": "toolrun"}, "ask", "needs approval: no rule allows tool WebSearch"),
]


def _filled(value: Any, ws: Path) -> Any:
    return value.replace("{ws}", str(ws)) if isinstance(value, str) else value


@pytest.mark.parametrize(
    ("tool", "tool_input", "decision", "reason"),
    CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)],
)
def test_documented_payloads_get_claude_codes_json(
    hook: Hook, ws: Path, tool: str, tool_input: dict[str, Any], decision: str | None,
    reason: str,
) -> None:
    given = {k: _filled(v, ws) for k, v in tool_input.items()}
    out = answer(hook(payload(ws, tool, given)))
    if decision is None:
        assert out is None  # allowed by toolrun's judgement: Claude Code decides
    else:
        assert out == pre(decision, "toolrun: " + _filled(reason, ws))


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git status", "allowed: `git status`: git is in the read-only set"),
        ("ls -la src", "allowed: `ls -la src`: ls is in the read-only set"),
        ("grep -rn TODO src | head -5",
         ("allowed: every sub-command is allowed; `grep -rn TODO src`: grep is in the "
         "read-only set")),
    ],
)
def test_allow_read_only_answers_the_read_only_set(
    hook: Hook, ws: Path, command: str, expected: str
) -> None:
    data = payload(ws, "Bash", {"command": command})
    assert answer(hook(data)) is None  # without the flag: Claude Code decides
    assert answer(hook(data, "--allow-read-only")) == pre("allow", "toolrun: " + expected)
    # a read inside the workspace is in the set too; an edit is not
    read = answer(hook(payload(ws, "Read", {"file_path": f"{ws}/README.md"}), "--allow-read-only"))
    assert read["hookSpecificOutput"]["permissionDecision"] == "allow"
    edit = payload(ws, "Edit", {"file_path": f"{ws}/src/app.py", "old_string": "o",
                                "new_string": "n"}, permission_mode="acceptEdits")
    assert answer(hook(edit, "--allow-read-only")) is None  # allowed by the mode: silent


@pytest.mark.parametrize(
    ("mode", "tool", "tool_input", "decision", "ends"),
    [
        ("dontAsk", "Bash", {"command": "git push origin main"}, "deny",
         "; dontAsk mode turns every ask into deny"),
        ("dontAsk", "Bash", {"command": "touch x"}, "deny",
         "; dontAsk mode turns every ask into deny"),
        ("plan", "Edit", {"file_path": "{ws}/src/app.py", "old_string": "o", "new_string": "n"},
         "deny", "; plan mode: nothing that writes or runs non-read-only commands may run"),
        ("plan", "Bash", {"command": "touch x"}, "deny",
         "; plan mode: nothing that writes or runs non-read-only commands may run"),
        # an explicit ask rule still asks in bypassPermissions, as in Claude Code
        ("bypassPermissions", "Bash", {"command": "git push origin main"}, "ask",
         "matches `git push origin main`"),
        ("acceptEdits", "Edit", {"file_path": "{ws}/src/app.py", "old_string": "o",
                                 "new_string": "n"}, None, ""),
        ("bypassPermissions", "Bash", {"command": "touch x"}, None, ""),
        # auto: what no rule decides is the classifier's; an ask rule still asks
        ("auto", "Bash", {"command": "touch x"}, None, ""),
        ("auto", "Bash", {"command": "git push origin main"}, "ask",
         "matches `git push origin main`"),
        ("auto", "Edit", {"file_path": "{ws}/.bashrc", "old_string": "a", "new_string": "b"},
         "ask", "no mode and no allow rule approves this"),
        # a mode toolrun does not know is decided as default, never looser
        ("someNewMode", "Bash", {"command": "touch x"}, "ask",
         "(touch is not in the read-only set)"),
        ("manual", "Bash", {"command": "touch x"}, "ask", "(touch is not in the read-only set)"),
    ],
)
def test_the_payloads_permission_mode_decides(
    hook: Hook, ws: Path, mode: str, tool: str, tool_input: dict[str, Any],
    decision: str | None, ends: str,
) -> None:
    given = {k: _filled(v, ws) for k, v in tool_input.items()}
    out = answer(hook(payload(ws, tool, given, permission_mode=mode)))
    if decision is None:
        assert out is None
        return
    assert out["hookSpecificOutput"]["permissionDecision"] == decision
    assert out["hookSpecificOutput"]["permissionDecisionReason"].endswith(ends)


def test_permission_request_gets_a_decision_behavior(hook: Hook, ws: Path) -> None:
    def request(command: str) -> dict[str, Any]:
        data = payload(ws, "Bash", {"command": command}, hook_event_name="PermissionRequest",
                       permission_suggestions=[{"type": "addRules"}])
        del data["tool_use_id"]  # PermissionRequest has none
        return data

    assert answer(hook(request("rm -rf build"))) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {
                "behavior": "deny",
                "message": "toolrun: denied: deny rule Bash(rm *) (toolrun.yaml:11) matches "
                "`rm -rf build`",
            },
        }
    }
    assert answer(hook(request("npm test"))) == {
        "hookSpecificOutput": {"hookEventName": "PermissionRequest",
                               "decision": {"behavior": "allow"}}
    }
    # an ask: the dialog Claude Code is about to show is the ask
    assert answer(hook(request("git push origin main"))) is None


def test_the_workspace_is_claude_project_dir_and_bash_runs_in_cwd(
    hook: Hook, ws: Path, tmp_path: Path
) -> None:
    """The project's rules apply from a subdirectory (the payload's cwd follows `cd`,
    CLAUDE_PROJECT_DIR does not), and the command is decided where it runs."""
    sub = ws / "src"
    data = payload(ws, "Bash", {"command": "rm app.py"}, cwd=str(sub))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = answer(hook(data, env={"CLAUDE_PROJECT_DIR": str(ws)}, cwd=elsewhere))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "Bash(rm *)" in out["hookSpecificOutput"]["permissionDecisionReason"]
    # `cat ../.env` from src/ is the workspace's .env
    data = payload(ws, "Bash", {"command": "cat ../.env"}, cwd=str(sub))
    out = answer(hook(data, env={"CLAUDE_PROJECT_DIR": str(ws)}))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "Read(./.env)" in out["hookSpecificOutput"]["permissionDecisionReason"]


def test_an_edit_of_the_config_takes_effect_on_the_next_call(hook: Hook, ws: Path) -> None:
    data = payload(ws, "Bash", {"command": "npm test"})
    assert answer(hook(data))["hookSpecificOutput"]["permissionDecision"] == "allow"
    text = (ws / "toolrun.yaml").read_text().replace('- "Bash(rm *)"', '- "Bash(npm *)"')
    (ws / "toolrun.yaml").write_text(text)
    assert answer(hook(data))["hookSpecificOutput"]["permissionDecision"] == "deny"
