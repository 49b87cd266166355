"""PermissionRequest ``updatedPermissions`` (#30): the rules a hook adds for the session
hold for the rest of the run under the guard of "always": an allow rule only if it is
one toolrun suggested for that call, deny and ask rules always (they only tighten);
nothing that could widen (a mode, directories, removing rules) is applied, and no
settings file is written. Real ``toolrun exec`` processes, a real hook script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.hooks.conftest import PY, journal, toolrun_exec

HOOK = """
import json, sys
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(event) + "\\n")
updates = json.loads(sys.argv[2])
if updates == "echo":  # what the docs describe: echo a suggestion, as "always" does
    updates = event["permission_suggestions"]
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
    "decision": {"behavior": "allow", "updatedPermissions": updates}}}))
"""


def setup(ws: Path, updates: Any, extra: str = "") -> tuple[str, Path]:
    script, log = ws.parent / "approve.py", ws.parent / "asked.jsonl"
    script.write_text(HOOK)
    command = f"{PY} {script} {log} {json.dumps(json.dumps(updates))}"
    config = (
        extra + "hooks:\n  PermissionRequest:\n    - matcher: '*'\n"
        f"      hooks: [{{type: command, command: {json.dumps(command)}}}]\n"
    )
    return config, log


def asked(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


WRITE = {"tool": "Write", "input": {"file_path": "out.txt", "content": "hi\n"}}


def test_an_echoed_suggestion_allows_the_same_call_for_the_rest_of_the_run(ws: Path) -> None:
    config, log = setup(ws, "echo")
    code, results, _err = toolrun_exec(ws, config, [[WRITE], [WRITE]], turns=True)
    assert code == 0 and [r["status"] for r in results] == ["ok", "ok"]
    assert asked(log) == 1  # the second call was allowed by the session rule
    first, second = results
    assert first["decided_by"]["kind"] == "hook"
    assert second["decided_by"]["kind"] == "rule"
    assert second["decided_by"]["rule"] == "Edit(./out.txt)"
    (record,) = [r for r in journal(ws) if r["event"] == "permission_updates"]
    assert record["updates"][0]["applied"] == ["Edit(./out.txt)"]


def rules(tool: str, content: str | None = None, behavior: str = "allow",
          kind: str = "addRules", destination: str = "session") -> list[dict[str, Any]]:
    rule = {"toolName": tool, **({"ruleContent": content} if content is not None else {})}
    return [{"type": kind, "rules": [rule], "behavior": behavior, "destination": destination}]


@pytest.mark.parametrize(
    "updates",
    [
        rules("Edit"),  # the whole tool: wider than the call
        rules("Edit", "**"),  # every file
        rules("Write"),  # every Write
        rules("Edit", "./other.txt"),  # a rule for another file: not what was asked
        [{"type": "setMode", "mode": "bypassPermissions", "destination": "session"}],
        [{"type": "addDirectories", "directories": ["/"], "destination": "session"}],
        rules("Edit", "./out.txt", kind="removeRules"),
    ],
    ids=["whole-tool", "glob", "other-tool-name", "other-file", "set-mode", "add-dirs",
         "remove-rules"],
)
def test_nothing_wider_than_always_is_applied(ws: Path, updates: list[dict[str, Any]]) -> None:
    config, log = setup(ws, updates)
    other = {"tool": "Write", "input": {"file_path": "other.txt", "content": "x\n"}}
    _code, results, _err = toolrun_exec(ws, config, [[WRITE], [WRITE], [other]], turns=True)
    # each call was approved by the hook itself: no session rule stood in for it
    assert asked(log) == 3
    assert all(r["decided_by"]["kind"] == "hook" for r in results)
    (record, *_rest) = [r for r in journal(ws) if r["event"] == "permission_updates"]
    note = record["updates"][0]
    assert note["applied"] == []
    assert note.get("refused") or "could widen" in note.get("why", "")


def test_a_deny_rule_a_hook_adds_denies_later_calls(ws: Path) -> None:
    config, _log = setup(ws, rules("Bash", "rm *", behavior="deny"), "permissions: {allow: [Bash]}\n")
    (ws / "keep.txt").write_text("k")
    calls = [[WRITE], [{"tool": "Bash", "input": {"command": "rm keep.txt"}}]]
    code, results, _err = toolrun_exec(ws, config, calls, turns=True)
    assert code == 4 and [r["status"] for r in results] == ["ok", "denied"]
    assert (ws / "keep.txt").exists()
    assert results[1]["decided_by"]["rule"] == "Bash(rm *)"


def test_a_settings_destination_applies_for_the_run_and_writes_no_file(ws: Path) -> None:
    config, log = setup(ws, rules("Edit", "./out.txt", destination="localSettings"))
    code, _results, _err = toolrun_exec(ws, config, [[WRITE], [WRITE]], turns=True)
    assert code == 0 and asked(log) == 1
    assert not (ws / ".claude").exists()
    (record,) = [r for r in journal(ws) if r["event"] == "permission_updates"]
    assert "for this run only" in record["updates"][0]["why"]
