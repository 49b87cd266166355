"""A live session's decisions, journalled by `toolrun hook` and listed by `runs`/`show`."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.hook.conftest import Hook, answer, base_env, payload


def toolrun(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolrun", *args, "--workspace", str(ws)],
        capture_output=True, text=True, cwd=ws, env=base_env(ws.parent), timeout=120,
        check=False,
    )


def test_runs_and_show_list_a_sessions_decisions(hook: Hook, ws: Path) -> None:
    calls = [
        ("Bash", {"command": "rm -rf build"}),
        ("Bash", {"command": "git push origin main"}),
        ("Bash", {"command": "npm test"}),
        ("Read", {"file_path": f"{ws}/README.md"}),
    ]
    for n, (tool, tool_input) in enumerate(calls, 1):
        answer(hook(payload(ws, tool, tool_input, session_id="abc-123",
                            tool_use_id=f"toolu_{n:02d}")))
    answer(hook(payload(ws, "Bash", {"command": "ls"}, session_id="other")))

    listed = json.loads(toolrun(ws, "runs", "--format", "json").stdout)
    runs = {r["run_id"]: r for r in listed}
    assert set(runs) == {"session-abc-123", "session-other"}
    session = runs["session-abc-123"]
    assert session["plans"] == ["Claude Code session abc-123"]
    assert session["summary"] == {"denied": 1, "needs_approval": 1, "skipped": 2}
    assert session["finished"] is False  # a live session has no end record

    shown = toolrun(ws, "show", "session-abc")
    assert shown.returncode == 0, shown.stderr
    rows = [line.split() for line in shown.stdout.splitlines()[3:7]]
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        ("1", "toolu_01", "Bash", "denied", "deny"),
        ("2", "toolu_02", "Bash", "needs_approval", "ask"),
        ("3", "toolu_03", "Bash", "skipped", "allow"),
        ("4", "toolu_04", "Read", "skipped", "allow"),
    ]
    one = toolrun(ws, "show", "session-abc-123", "toolu_01")
    assert "decision:  deny by rule Bash(rm *) (toolrun.yaml:11)" in one.stdout
    assert "toolrun answered deny: toolrun: denied: deny rule Bash(rm *)" in one.stdout
    silent = toolrun(ws, "show", "session-abc-123", "toolu_04")
    assert "toolrun answered nothing (the agent decides)" in silent.stdout


def test_the_run_record_says_where_the_session_is(hook: Hook, ws: Path) -> None:
    answer(hook(payload(ws, "Bash", {"command": "ls"}, session_id="s/../../x y")))
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    assert journal.name == "session-s-..-..-x-y.jsonl"  # one file name, inside runs/
    first, result = (json.loads(line) for line in journal.read_text().splitlines())
    assert first["event"] == "run" and first["session_id"] == "s/../../x y"
    assert first["transcript_path"] == str(ws / "transcript.jsonl")
    assert first["config_files"] == ["toolrun.yaml", ".claude/settings.json"]
    assert result["execution_id"].startswith("exec_")
    assert uuid.UUID(result["execution_id"][5:]).version == 4  # as the executor's ids
    assert result["metadata"]["answer"] == "none"
    assert result["metadata"]["hook_event"] == "PreToolUse"
    assert result["metadata"]["silent_because"].startswith("allowed by toolrun's read-only set")


def test_parallel_hooks_append_whole_numbered_records(hook: Hook, ws: Path) -> None:
    """Claude Code runs the hooks of a batch's calls at once: one run record, every
    decision whole, numbered without gaps or repeats."""
    def one(n: int) -> None:
        answer(hook(payload(ws, "Bash", {"command": f"rm -rf dir{n}"}, session_id="par",
                            tool_use_id=f"toolu_{n}")))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(8)))
    lines = (ws / ".toolrun" / "runs" / "session-par.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["event"] for r in records] == ["run"] + ["result"] * 8
    assert sorted(r["index"] for r in records[1:]) == list(range(8))
    assert sorted(r["id"] for r in records[1:]) == sorted(f"toolu_{n}" for n in range(8))


def test_no_journal_writes_nothing(hook: Hook, ws: Path) -> None:
    answer(hook(payload(ws, "Bash", {"command": "rm -rf x"}), "--no-journal"))
    assert not (ws / ".toolrun").exists()


def test_session_end_finishes_the_run_so_prune_may_delete_it(hook: Hook, ws: Path) -> None:
    answer(hook(payload(ws, "Bash", {"command": "rm -rf x"}, session_id="ending")))
    answer(hook(payload(ws, "Bash", {"command": "ls"}, session_id="live")))
    kept = toolrun(ws, "runs", "prune", "--keep", "0")
    assert "kept 2 run(s) with no end record, still running" in kept.stderr
    end = {"session_id": "ending", "transcript_path": str(ws / "t.jsonl"), "cwd": str(ws),
           "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
    done = hook(end)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    runs = {r["run_id"]: r for r in json.loads(toolrun(ws, "runs", "--format", "json").stdout)}
    assert runs["session-ending"]["finished"] is True
    assert runs["session-ending"]["wall_ms"] >= 0
    assert runs["session-live"]["finished"] is False
    last = json.loads((ws / ".toolrun/runs/session-ending.jsonl").read_text().splitlines()[-1])
    assert last["event"] == "end" and last["reason"] == "prompt_input_exit"
    pruned = toolrun(ws, "runs", "prune", "--keep", "0")
    assert "deleted session-ending" in pruned.stdout
    assert not (ws / ".toolrun/runs/session-ending.jsonl").exists()
    # a session that decided nothing has no journal to end
    other = hook({**end, "session_id": "never"})
    assert (other.returncode, other.stdout, other.stderr) == (0, "", "")
    assert not (ws / ".toolrun/runs/session-never.jsonl").exists()


def test_a_session_silent_for_a_day_is_abandoned_and_pruned(hook: Hook, ws: Path) -> None:
    # no process holds a live session's journal between tool calls: it is kept while
    # decisions keep coming, and counts as crashed (pruned) after a day without one
    import os
    import time

    answer(hook(payload(ws, "Bash", {"command": "ls"}, session_id="recent")))
    answer(hook(payload(ws, "Bash", {"command": "ls"}, session_id="gone")))
    old = time.time() - 25 * 3600
    os.utime(ws / ".toolrun/runs/session-gone.jsonl", (old, old))
    pruned = toolrun(ws, "runs", "prune", "--keep", "0")
    assert "deleted session-gone" in pruned.stdout
    assert "session-recent" in pruned.stderr and "session-recent" not in pruned.stdout
    assert (ws / ".toolrun/runs/session-recent.jsonl").exists()
