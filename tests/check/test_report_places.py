"""check's report says where each Bash call would run (#25) in every way a check runs (one
process, an input split between forked processes, inputs in spawned processes, shards
merged), and what ``--fail-on`` let through rather than "nothing fails" (#26)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.check.helpers import write

READ_ONLY = ("read-only jail", "allowed on toolrun's judgement (the read-only set)")
RULED = ("unsandboxed", "allowed by a rule: runs as configured")
ASKED = ("unsandboxed", "if approved: runs as configured")
DENIED = (None, None)
CONFIG = (
    'permissions:\n  allow: ["Bash(git status)"]\n  ask: ["Bash(git push *)"]\n'
    '  deny: ["Bash(curl *)"]\n'
)
TURN = [
    "cat src/a.py",  # the read-only set: a read-only jail
    "git status",  # a rule: as configured
    "curl https://example.com",  # denied: runs nowhere
]
EXPECTED = [READ_ONLY, RULED, DENIED]
#: an allow an earlier call may change (``depends on``): exec decides it afresh
MARKED = (None, None)


def bash_plan(ws: Path, name: str, turns: int, turn: list[str] = TURN) -> Path:
    doc = {"turns": [{"calls": [{"tool": "Bash", "input": {"command": c}} for c in turn]}
                     for _ in range(turns)]}  # fmt: skip
    return write(ws / name, json.dumps(doc))


def toolrun(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolrun", "check", *args],
        cwd=ws, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def places(report: dict[str, Any]) -> list[tuple[Any, Any]]:
    return [(r["runs_in"], r["runs_in_why"]) for r in report["results"]]


@pytest.fixture
def project(ws: Path) -> Path:
    write(ws / "src" / "a.py", "print(1)\n")
    write(ws / "toolrun.yaml", CONFIG)
    return ws


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_split_check_says_where_each_call_runs_as_one_process_does(project: Path) -> None:
    bash_plan(project, "plan.json", 40)
    one = toolrun(project, "plan.json", "--format", "json", "--jobs", "1")
    split = toolrun(project, "plan.json", "--format", "json", "--jobs", "3")
    assert (one.returncode, split.returncode) == (4, 4), one.stderr + split.stderr
    first, parts = json.loads(one.stdout), json.loads(split.stdout)
    assert places(first) == EXPECTED * 40
    assert places(parts) == places(first)
    for report in (first, parts):
        assert (report["summary"]["enforced"], report["summary"]["enforced_reason"]) == (True, None)


def test_a_split_check_where_no_jail_can_be_made_says_so_in_every_part(project: Path) -> None:
    script = write(project / "not-bwrap", "#!/bin/sh\nexit 1\n")
    script.chmod(0o755)
    write(project / "toolrun.yaml", CONFIG + (
        f"sandbox:\n  enabled: true\n  failIfUnavailable: false\n  bwrapPath: {script}\n"
    ))  # fmt: skip
    bash_plan(project, "plan.json", 40)
    split = toolrun(project, "plan.json", "--format", "json", "--jobs", "3")
    assert split.returncode == 4, split.stderr
    report = json.loads(split.stdout)
    reads = places(report)[::3]
    assert len(reads) == 40
    reason = report["summary"]["enforced_reason"]
    assert reason.startswith("bubblewrap cannot create namespaces here (exit 1)")
    assert set(reads) == {
        ("unsandboxed", f"{READ_ONLY[1]}, but no jail can be made here: {reason}")
    }
    assert report["summary"]["enforced"] is False


def test_a_call_marked_in_a_later_part_runs_nowhere_yet_as_in_one_process(project: Path) -> None:
    # each turn's ask (it may write anything) marks the read after it, in every part
    bash_plan(project, "plan.json", 40, ["git push origin main", "cat src/a.py"])
    one = json.loads(toolrun(project, "plan.json", "--format", "json", "--jobs", "1").stdout)
    split = json.loads(toolrun(project, "plan.json", "--format", "json", "--jobs", "3").stdout)
    assert places(one) == [ASKED, MARKED] * 40
    assert places(split) == places(one)
    assert {r["decided_by"]["kind"] for r in split["results"][1::2]} == {"depends"}


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_inputs_checked_in_spawned_processes_say_where_each_call_runs(project: Path) -> None:
    bash_plan(project, "a.json", 2)
    bash_plan(project, "b.json", 3)
    done = toolrun(project, "a.json", "b.json", "--format", "json", "--jobs", "2")
    assert done.returncode == 4, done.stderr
    assert places(json.loads(done.stdout)) == EXPECTED * 5
    text = toolrun(project, "a.json", "b.json", "--format", "text", "--jobs", "2").stdout
    assert text.splitlines()[1] == (
        "a.json:1:23: allow call-1 Bash(cat src/a.py) · turn 1 · run 1 concurrent · read-only "
        "jail — allowed: `cat src/a.py`: cat is in the read-only set"
    )


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_merged_shards_keep_where_each_call_runs(project: Path) -> None:
    for i in range(4):
        bash_plan(project, f"p{i}.json", 1)
    whole = json.loads(toolrun(project, "p*.json", "--format", "json").stdout)
    for k in (1, 2):
        done = toolrun(project, "p*.json", "--shard", f"{k}/2", "-o", f"shard-{k}.json")
        assert done.returncode in (0, 4), done.stderr
    merged = toolrun(project, "--merge-reports", "shard-1.json", "shard-2.json", "--format", "json")
    assert merged.returncode == 4, merged.stderr
    assert places(json.loads(merged.stdout)) == places(whole) == EXPECTED * 4


# -- what --fail-on let through (#26) ------------------------------------------------------

ASKS_ONLY = "calls:\n" + "".join(
    f"  - {{tool: Bash, input: {{command: git push origin b{i}}}}}\n" for i in range(3)
)
MIXED = ASKS_ONLY + "  - {tool: Bash, input: {command: curl https://example.com}}\n" * 2


def recap(out: str) -> str:
    """The summary line, less its time."""
    line = out.splitlines()[-1]
    return line[: line.rindex(" in ")]


def test_asks_let_through_are_counted_not_called_nothing(project: Path) -> None:
    write(project / "plan.yaml", ASKS_ONLY)
    done = toolrun(project, "plan.yaml")
    assert done.returncode == 0
    assert recap(done.stdout) == "1 input, 3 calls: 3 ask — 3 asks not failing (--fail-on deny)"
    report = json.loads(toolrun(project, "plan.yaml", "--format", "json").stdout)
    assert report["summary"]["not_failing"] == {"deny": 0, "ask": 3}
    assert report["summary"]["failing"] == 0
    asked = toolrun(project, "plan.yaml", "--fail-on", "ask")
    assert asked.returncode == 5
    assert recap(asked.stdout) == "1 input, 3 calls: 3 ask — 3 failing (--fail-on ask)"
    report = json.loads(toolrun(project, "plan.yaml", "--format", "json", "--fail-on", "ask").stdout)
    assert report["summary"]["not_failing"] == {"deny": 0, "ask": 0}


def test_one_ask_let_through_is_one(project: Path) -> None:
    write(project / "plan.yaml", "calls:\n  - {tool: Bash, input: {command: git push origin x}}\n")
    assert recap(toolrun(project, "plan.yaml").stdout) == (
        "1 input, 1 call: 1 ask — 1 ask not failing (--fail-on deny)"
    )


def test_denies_and_asks_let_through_by_never_are_both_counted(project: Path) -> None:
    write(project / "plan.yaml", MIXED)
    done = toolrun(project, "plan.yaml", "--fail-on", "never")
    assert done.returncode == 0
    assert recap(done.stdout) == (
        "1 input, 5 calls: 3 ask · 2 deny — 2 denies and 3 asks not failing (--fail-on never)"
    )
    report = json.loads(toolrun(project, "plan.yaml", "--format", "json", "--fail-on", "never").stdout)
    assert report["summary"]["not_failing"] == {"deny": 2, "ask": 3}


def test_failing_calls_and_asks_let_through_are_both_said(project: Path) -> None:
    write(project / "plan.yaml", MIXED)
    done = toolrun(project, "plan.yaml")
    assert done.returncode == 4
    assert recap(done.stdout) == (
        "1 input, 5 calls: 3 ask · 2 deny — 2 failing, 3 asks not failing (--fail-on deny)"
    )


def test_an_invalid_input_beside_asks_says_both(project: Path) -> None:
    write(project / "plan.yaml", ASKS_ONLY)
    write(project / "bad.yaml", "calls: [{tool: Nope, input: {}}]\n")
    done = toolrun(project, "plan.yaml", "bad.yaml")
    assert done.returncode == 3
    assert recap(done.stdout) == (
        "2 inputs, 3 calls: 3 ask · 1 invalid input — an invalid input fails the check; "
        "3 asks not failing (--fail-on deny)"
    )


def test_all_allowed_still_says_nothing_fails(project: Path) -> None:
    write(project / "plan.yaml", "calls:\n  - {tool: Bash, input: {command: cat src/a.py}}\n")
    done = toolrun(project, "plan.yaml")
    assert recap(done.stdout) == "1 input, 1 call: 1 allow — nothing fails (--fail-on deny)"
    report = json.loads(toolrun(project, "plan.yaml", "--format", "json").stdout)
    assert report["summary"]["not_failing"] == {"deny": 0, "ask": 0}


def test_a_policy_diff_says_the_loosenings_never_let_through(project: Path) -> None:
    write(project / "plan.yaml", MIXED)
    write(project / "looser.yaml", 'permissions:\n  allow: ["Bash(git push *)"]\n')
    done = toolrun(project, "plan.yaml", "--compare-config", "looser.yaml", "--fail-on", "never")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "policy diff toolrun.yaml → looser.yaml: 5 calls, 5 loosened, 0 tightened — "
        "5 loosened decisions not failing (--fail-on never)"
    )
    report = json.loads(toolrun(project, "plan.yaml", "--compare-config", "looser.yaml",
                                "--fail-on", "never", "--format", "json").stdout)  # fmt: skip
    assert report["summary"]["not_failing"] == {"loosened": 5}
    loosen = toolrun(project, "plan.yaml", "--compare-config", "looser.yaml", "--fail-on", "loosen")
    assert loosen.returncode == 4
    assert loosen.stdout.splitlines()[-1].endswith(
        "— loosened decisions fail the check (--fail-on loosen)"
    )
