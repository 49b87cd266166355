"""What hooks read (#30): path fields absolute as Claude Code sends them, and
PostToolUseFailure's ``error`` with what the failed command printed. Real ``toolrun
exec`` processes; each hook logs the JSON it was given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.hooks.conftest import PY, hooks_yaml, toolrun_exec

LOGGER = """
import json, sys
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(event) + "\\n")
if len(sys.argv) > 2:  # echo the input back as updatedInput (a hook that normalises)
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                             "updatedInput": event["tool_input"]}}))
"""


def logger(ws: Path, *extra: str) -> tuple[str, Path]:
    script, log = ws.parent / "logger.py", ws.parent / "seen.jsonl"
    script.write_text(LOGGER)
    return f"{PY} {script} {log} {' '.join(extra)}".strip(), log


def seen(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize(
    ("tool", "field", "given", "expected"),
    [
        ("Write", "file_path", "out.txt", "out.txt"),  # the reported spelling
        ("Write", "file_path", "./sub/../out.txt", "out.txt"),
        ("Edit", "file_path", "sub/./a.txt", "sub/a.txt"),
        ("Read", "file_path", "~/notes.txt", "HOME/notes.txt"),
        ("Glob", "path", "sub", "sub"),
        ("Grep", "path", "./sub", "sub"),
    ],
)
def test_tool_paths_reach_hooks_absolute(
    ws: Path, tool: str, field: str, given: str, expected: str
) -> None:
    home = ws.parent / "home"
    home.mkdir()
    (home / "notes.txt").write_text("n\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "a.txt").write_text("a\n")
    inputs: dict[str, dict[str, Any]] = {
        "Write": {"content": "x\n"}, "Edit": {"old_string": "a", "new_string": "b"},
        "Read": {}, "Glob": {"pattern": "*.txt"}, "Grep": {"pattern": "a"},
    }
    call = {"tool": tool, "input": {**inputs[tool], field: given}}
    command, log = logger(ws)
    post = hooks_yaml("PostToolUse", "*", command).removeprefix("hooks:\n")
    config = hooks_yaml("PreToolUse", "*", command) + post + (
        "permissions: {allow: [Write, Edit, Read, Glob, Grep]}\n"
    )
    code, (r,), _err = toolrun_exec(ws, config, [call], env={"HOME": str(home)})
    want = (str(home) + expected[4:]) if expected.startswith("HOME") else str(ws / expected)
    assert code == 0, r
    pre, post = seen(log)
    assert pre["tool_input"][field] == want and post["tool_input"][field] == want
    # the result keeps the input as the plan wrote it: nothing was rewritten
    assert r["input"][field] == given and "original_input" not in r


def test_an_input_echoed_back_with_absolute_paths_is_no_rewrite(ws: Path) -> None:
    command, _log = logger(ws, "echo")
    config = hooks_yaml("PreToolUse", "Write", command, extra="permissions: {allow: [Write]}\n")
    call = {"tool": "Write", "input": {"file_path": "out.txt", "content": "x\n"}}
    code, (r,), _err = toolrun_exec(ws, config, [call])
    assert code == 0 and (ws / "out.txt").read_text() == "x\n"
    assert "original_input" not in r and r["input"]["file_path"] == "out.txt"


FAILURE = "permissions: {allow: [Bash, Read]}\n"


@pytest.mark.parametrize(
    ("command", "first_line", "printed"),
    [
        ("echo to-stderr >&2; exit 3", "Exit code 3", ["to-stderr"]),  # the reported case
        ("echo to-stdout; echo to-stderr >&2; exit 1", "Exit code 1", ["to-stdout", "to-stderr"]),
        ("no-such-program-xyz", "Exit code 127", ["no-such-program-xyz", "not found"]),
        ("exit 5", "Exit code 5", []),
    ],
)
def test_post_tool_use_failure_error_carries_the_commands_stderr(
    ws: Path, command: str, first_line: str, printed: list[str]
) -> None:
    hook, log = logger(ws)
    config = hooks_yaml("PostToolUseFailure", "Bash", hook, extra=FAILURE)
    code, (r,), _err = toolrun_exec(ws, config, [{"tool": "Bash", "input": {"command": command}}])
    assert code == 1 and r["status"] == "error"
    (event,) = seen(log)
    error = event["error"]
    assert error.splitlines()[0] == first_line
    for text in printed:
        assert text in error
    assert event["is_interrupt"] is False


def test_a_failed_read_gives_its_error(ws: Path) -> None:
    hook, log = logger(ws)
    config = hooks_yaml("PostToolUseFailure", "Read", hook, extra=FAILURE)
    _code, (r,), _err = toolrun_exec(ws, config, [{"tool": "Read", "input": {"file_path": "gone"}}])
    assert r["status"] == "error"
    (event,) = seen(log)
    assert event["error"].splitlines()[0] == r["error"].splitlines()[0]
