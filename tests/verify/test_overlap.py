"""A write's verifiers run on while the calls after it go, but never past a call that may
touch the same file: a write of that file, or a call whose files are unknown (Bash that is
not read-only). Real `toolrun exec` runs; the verifier itself looks at the disk."""

from __future__ import annotations

import json
import shlex
from datetime import datetime
from pathlib import Path

from tests.verify.conftest import PY, edit, plan, run

#: Waits (up to WAIT seconds) for b.txt, then looks a moment longer for c.txt; reports what it
#: saw as a warning on line 1 of the file it verifies, and logs when it ended.
WATCH = r'''
import os, sys, time
log, wait, files = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
deadline = time.time() + wait
while time.time() < deadline and not os.path.exists("b.txt"):
    time.sleep(0.02)
saw_b = os.path.exists("b.txt")
time.sleep(1.0)
print(f"{files[0]}:1:1: warning: saw-b={saw_b} saw-c={os.path.exists('c.txt')}")
with open(log, "a") as fh:
    fh.write(f"{time.time()}\n")
'''


def setup(ws: Path, wait: float = 10) -> Path:
    script, log = ws.parent / "watch.py", ws.parent / "ended.log"
    script.write_text(WATCH)
    verifier = {"name": "watch", "files": ["*.py"], "timeout": 30,
                "command": f"{PY} {shlex.quote(str(script))} {shlex.quote(str(log))} {wait} {{files}}"}
    (ws / "toolrun.yaml").write_text(
        "permissions:\n  allow: [Edit, Write, Read, Bash]\n"
        "toolrun:\n  autoVerify: " + json.dumps([verifier]) + "\n"
    )
    (ws / "a.py").write_text("x = 1\n")
    return log


def seen(result: dict[str, object]) -> str:
    (report,) = result["verify"]  # type: ignore[misc]
    return str(report["diagnostics"][0]["message"])


def at(iso: object) -> float:
    return datetime.fromisoformat(str(iso)).timestamp()


def test_later_calls_go_on_while_a_write_is_verified(ws: Path) -> None:
    log = setup(ws)
    plan(ws, edit("a.py", "x = 1", "x = 2"),
         {"tool": "Write", "input": {"file_path": "b.txt", "content": "b\n"}},
         {"tool": "Read", "input": {"file_path": "b.txt"}},
         edit("a.py", "x = 2", "x = 3"))
    code, results = run()
    assert code == 0 and [r["status"] for r in results] == ["ok"] * 4
    # the verifier of the first edit saw the later Write happen while it ran
    assert seen(results[0]).startswith("saw-b=True")
    # the second edit of a.py waited for the first edit's verifier to end
    first_ended = float(log.read_text().split()[0])
    assert at(results[3]["started_at"]) >= first_ended
    assert (ws / "a.py").read_text() == "x = 3\n"


def test_a_call_that_may_touch_any_file_waits_for_the_verifiers(ws: Path) -> None:
    setup(ws)
    (ws / "b.txt").write_text("already\n")
    plan(ws, edit("a.py", "x = 1", "x = 2"),
         {"tool": "Bash", "input": {"command": "touch c.txt"}})
    code, results = run()
    assert code == 0 and [r["status"] for r in results] == ["ok", "ok"]
    assert seen(results[0]) == "saw-b=True saw-c=False"
    assert (ws / "c.txt").exists()


def test_the_next_turn_starts_after_the_verifiers_of_this_one(ws: Path) -> None:
    log = setup(ws, wait=2)
    (ws / "plan.json").write_text(json.dumps({"turns": [
        {"calls": [edit("a.py", "x = 1", "x = 2")]},
        {"calls": [{"tool": "Write", "input": {"file_path": "b.txt", "content": "b\n"}}]},
    ]}))
    code, results = run()
    assert code == 0
    # the turn's verifier never saw the next turn's file: it waited its 2 s for it
    assert seen(results[0]).startswith("saw-b=False")
    assert at(results[1]["started_at"]) >= float(log.read_text().split()[0])
