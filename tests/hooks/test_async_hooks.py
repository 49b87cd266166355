"""``async: true`` hooks run in the background (#30): the run does not wait for them
between calls, their output decides nothing, and each one's end is journalled; the run
waits for them before it ends, so none outlives it. Real ``toolrun exec`` processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hooks.conftest import PY, journal, toolrun_exec

#: waits (at most 30 s) for a file a *later* call writes: run in line, it could not see it
WAITER = """
import json, os, sys, time
json.load(sys.stdin)
go = os.path.join(sys.argv[1], "go")
deadline = time.monotonic() + 30
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.02)
with open(os.path.join(sys.argv[1], "async-done"), "w") as out:
    out.write("saw go" if os.path.exists(go) else "no go")
print(sys.argv[2])
sys.exit(int(sys.argv[3]))
"""

DENY = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                          "permissionDecision": "deny"}})


def config(ws: Path, event: str, answer: str = "", code: int = 0) -> str:
    script = ws.parent / "waiter.py"
    script.write_text(WAITER)
    command = f"{PY} {script} {ws} {json.dumps(answer) if answer else '-'} {code}"
    return (
        "permissions: {allow: [Bash]}\nhooks:\n"
        f"  {event}:\n    - matcher: Bash\n      hooks:\n"
        f"        - {{type: command, async: true, timeout: 60, command: {json.dumps(command)}}}\n"
    )


CALLS = [
    [{"tool": "Bash", "input": {"command": "echo first"}}],
    [{"tool": "Bash", "input": {"command": "touch go"}}],
]


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse"])
def test_an_async_hook_does_not_hold_the_calls_after_it(ws: Path, event: str) -> None:
    code, results, _err = toolrun_exec(ws, config(ws, event), CALLS, turns=True)
    assert code == 0 and [r["status"] for r in results] == ["ok", "ok"]
    # it saw the file the second call made: the run went on while it waited
    assert (ws / "async-done").read_text() == "saw go"
    ((record,),) = [r["hooks"] for r in results[:1]]
    assert record["runs"][0]["outcome"] == "background"
    done = [r for r in journal(ws) if r["event"] == "async_hook"]
    assert len(done) == 2 and all(d["hook"]["outcome"] == "success" for d in done)


@pytest.mark.parametrize(
    ("answer", "code"),
    [(DENY, 0), ("", 2), (json.dumps({"continue": False}), 0), ("{not json", 0)],
    ids=["deny", "exit-2", "continue-false", "bad-json"],
)
def test_what_an_async_hook_says_decides_nothing(ws: Path, answer: str, code: int) -> None:
    (ws / "go").write_text("")  # it need not wait here
    code_, results, _err = toolrun_exec(ws, config(ws, "PreToolUse", answer, code), CALLS,
                                        turns=True)
    assert code_ == 0 and [r["status"] for r in results] == ["ok", "ok"]
    ends = [r for r in journal(ws) if r["event"] == "async_hook"]
    assert len(ends) == 2  # each journalled, with what it said
    assert all(e["hook"]["exit_code"] == code for e in ends)
