"""Claude Code reads a hook's JSON only when it exits 0 (docs/hooks "JSON output": "Claude
Code only processes JSON on exit 0"). A non-zero exit with JSON is that exit code: 2
blocks with stderr, any other is a non-blocking error (the call runs), or a denial under
``hookFailure: closed``. Real ``toolrun exec`` processes, real hook scripts (#30)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hooks.conftest import PY, hooks_yaml, toolrun_exec

GUARD = """
import json, os, sys
json.load(sys.stdin)
print(os.environ["ANSWER"])
sys.stderr.write(os.environ.get("ERR", ""))
sys.exit(int(os.environ["CODE"]))
"""

DENY = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": "json says no"}}


def guard(ws: Path, answer: object, code: int, err: str = "") -> str:
    script = ws.parent / "guard.py"
    script.write_text(GUARD)
    return (f"env ANSWER={json.dumps(json.dumps(answer))} CODE={code} ERR={json.dumps(err)} "
            f"{PY} {script}")


CALL = [{"tool": "Bash", "input": {"command": "touch ran.txt"}}]
ALLOW = "permissions: {allow: [Bash]}\n"


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        (DENY, 1),  # the reported spelling: exit 1 with a deny
        ({"decision": "block", "reason": "legacy block"}, 1),
        (DENY, 3),
        ({**DENY, "continue": False}, 42),
    ],
    ids=["deny-exit-1", "legacy-block-exit-1", "deny-exit-3", "stop-exit-42"],
)
def test_json_after_a_non_zero_exit_is_ignored_and_the_call_runs(
    ws: Path, answer: object, code: int
) -> None:
    config = hooks_yaml("PreToolUse", "Bash", guard(ws, answer, code), extra=ALLOW)
    exit_code, (r,), _err = toolrun_exec(ws, config, CALL)
    assert exit_code == 0 and r["status"] == "ok" and (ws / "ran.txt").exists()
    (record,) = r["hooks"]
    (run,) = record["runs"]
    assert run["outcome"] == "non_blocking_error" and run["failure"] == "json_on_error"
    assert run["decision"] is None and f"exited {code}" in run["error"]


def test_under_hook_failure_closed_it_denies_naming_the_hook(ws: Path) -> None:
    config = hooks_yaml(
        "PreToolUse", "Bash", guard(ws, DENY, 1, "oops"),
        extra=ALLOW + "toolrun: {hookFailure: closed}\n",
    )
    exit_code, (r,), _err = toolrun_exec(ws, config, CALL)
    assert exit_code == 4 and r["status"] == "denied" and not (ws / "ran.txt").exists()
    assert "guard.py" in r["error"] and "hookFailure: closed" in r["error"]
    assert "JSON is read only on exit 0" in r["error"] and "oops" in r["error"]


def test_exit_2_with_json_blocks_with_stderr_not_the_json(ws: Path) -> None:
    allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                    "permissionDecision": "allow"}}
    config = hooks_yaml("PreToolUse", "Bash", guard(ws, allow, 2, "blocked by policy"),
                        extra=ALLOW)
    exit_code, (r,), _err = toolrun_exec(ws, config, CALL)
    assert exit_code == 4 and r["status"] == "denied" and "blocked by policy" in r["error"]


def test_exit_0_json_still_decides(ws: Path) -> None:
    config = hooks_yaml("PreToolUse", "Bash", guard(ws, DENY, 0), extra=ALLOW)
    exit_code, (r,), _err = toolrun_exec(ws, config, CALL)
    assert exit_code == 4 and "json says no" in r["error"] and not (ws / "ran.txt").exists()
