"""``systemMessage`` and ``additionalContext`` are shown (#30): in the streamed text line,
the table, ``--verbose`` and ``show``, not only in JSON and the journal. Real ``toolrun``
processes and a real hook for each event that can give them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hooks.conftest import hooks_yaml


def toolrun(ws: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", *args], cwd=ws, capture_output=True, text=True,
        timeout=120, check=False, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    ("event", "command", "call"),
    [
        ("PostToolUse", "echo hi", "Bash"),
        ("PreToolUse", "echo hi", "Bash"),
        ("PostToolUseFailure", "exit 1", "Bash"),
        ("PreToolUse", "", "Read"),
    ],
)
def test_messages_are_shown_everywhere(ws: Path, event: str, command: str, call: str) -> None:
    said = {"systemMessage": "Build is red on main",
            "hookSpecificOutput": {"hookEventName": event,
                                   "additionalContext": "src/gen.py is generated"}}
    hook = f"echo {json.dumps(json.dumps(said))}"
    (ws / "toolrun.yaml").write_text(
        hooks_yaml(event, "*", hook, extra="permissions: {allow: [Bash, Read]}\n")
    )
    (ws / "a.txt").write_text("a\n")
    given = {"command": command} if call == "Bash" else {"file_path": "a.txt"}
    (ws / "plan.json").write_text(json.dumps({"calls": [{"tool": call, "input": given}]}))
    for args in (("--format", "text"), ("--format", "table"), ("--verbose",)):
        out = toolrun(ws, "exec", "plan.json", *args)
        # in the one-line note, in short, before the rest (a table cuts the note's end)
        assert "message: Build is red on main; context: src/gen.py is generated" in out
        if args == ("--verbose",):  # and in full, naming the hook
            assert "systemMessage from " in out and "additionalContext from " in out
    shown = toolrun(ws, "show", "last", "call-1")
    assert "systemMessage from" in shown and "Build is red on main" in shown
    assert "additionalContext from" in shown and "src/gen.py is generated" in shown
    listing = toolrun(ws, "show", "last")
    assert "Build is red on main" in listing
