"""What keeps a check of a big plan small: memos that pay for themselves, nothing kept twice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.check.helpers import write
from toolrun.cli import main
from toolrun.commands import check_decide
from toolrun.commands.check import CheckRequest, check
from toolrun.permissions import readonly


def plan(ws: Path, calls: list[dict[str, object]]) -> Path:
    turns = [{"calls": calls[i : i + 10]} for i in range(0, len(calls), 10)]
    return write(ws / "plan.json", json.dumps({"turns": turns}))


def decider_cache() -> dict[object, object]:
    (state,) = check_decide._STATES.values()
    return state.decider.cache  # type: ignore[return-value]


def test_a_plan_of_distinct_calls_keeps_a_small_memo(ws: Path) -> None:
    n = check_decide.CheckDecider.MIN_CACHED + 1000
    plan(ws, [{"tool": "Read", "input": {"file_path": f"src/f{i}.py"}} for i in range(n)])
    report = check(CheckRequest(inputs=["plan.json"], workspace=ws))
    assert report.counts()["allow"] == n
    assert len(decider_cache()) <= check_decide.CheckDecider.MIN_CACHED


def test_a_plan_that_repeats_itself_grows_the_memo(ws: Path) -> None:
    small = check_decide.CheckDecider.MIN_CACHED
    # 2,000 paths read twice, then enough new ones to fill the small memo
    paths = [f"src/a{i}.py" for i in range(2000)] * 2 + [f"src/b{i}.py" for i in range(small)]
    plan(ws, [{"tool": "Read", "input": {"file_path": p}} for p in paths])
    check(CheckRequest(inputs=["plan.json"], workspace=ws))
    (state,) = check_decide._STATES.values()
    # the memo filled with decisions that were reused: it may now hold more
    assert state.decider.limit == check_decide.CheckDecider.MAX_CACHED


def test_a_bash_command_s_safety_is_worked_out_once_per_check(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    asked: list[str] = []
    real = readonly.is_read_only_command

    class Counting(readonly.BashVerdicts):
        def __init__(self, command: str, *args: Any) -> None:
            seen.append(command)
            super().__init__(command, *args)

    def counting(command: str, cwd: Path, workspace: Path) -> bool:
        asked.append(command)
        return real(command, cwd, workspace)

    monkeypatch.setattr(readonly, "BashVerdicts", Counting)
    monkeypatch.setattr(readonly, "is_read_only_command", counting)
    # globs and git are worked out afresh by exec (files change as calls run); a check
    # runs nothing, so once is enough
    commands = ["ls *.py", "git status", "cat a.txt"] * 40
    plan(ws, [{"tool": "Bash", "input": {"command": c}} for c in commands])
    report = check(CheckRequest(inputs=["plan.json"], workspace=ws))
    assert report.counts()["calls"] == 120
    assert sorted(seen) == ["cat a.txt", "git status", "ls *.py"]
    assert asked == []  # the grouping reads each call's verdict from its decision


def test_reports_of_a_plan_of_many_turns_keep_every_call_in_order(
    runner: CliRunner, ws: Path
) -> None:
    # the turns are handed to the executor one by one and let go: nothing may be lost
    calls = [
        {"tool": "Bash", "input": {"command": f"echo {i}"}}
        if i % 3
        else {"tool": "Read", "input": {"file_path": f"f{i}"}}
        for i in range(2500)
    ]
    plan(ws, calls)
    result = runner.invoke(main, ["check", "plan.json", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["index"] for r in records] == list(range(2500))
    assert [r["turn"] for r in records] == [i // 10 + 1 for i in range(2500)]
    assert {r["decision"] for r in records} == {"allow"}


LINKING_HOOK = """
import json, os, sys
call = json.load(sys.stdin)
if os.path.basename(call["tool_input"].get("file_path", "")) == "make-link":  # absolute
    os.symlink(sys.argv[1], "later")
"""


def test_a_hook_that_changes_the_files_is_seen_by_the_calls_after_it(
    ws: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Without hooks nothing runs during a check, and a name found missing is remembered;
    # a hook runs code, so every lookup then reads the files as they are.
    outside = tmp_path_factory.mktemp("outside")  # not in the workspace
    write(ws / "hook.py", LINKING_HOOK)
    hook = {"type": "command", "command": f"{sys.executable} hook.py {outside}"}
    write(ws / "toolrun.yaml", json.dumps({"hooks": {"PreToolUse": [{"matcher": "Read",
                                                                     "hooks": [hook]}]}}))
    plan = {"turns": [
        {"calls": [{"tool": "Read", "input": {"file_path": "later/a.txt"}}]},
        {"calls": [{"tool": "Read", "input": {"file_path": "make-link"}}]},
        {"calls": [{"tool": "Read", "input": {"file_path": "later/b.txt"}}]},
    ]}  # fmt: skip
    write(ws / "plan.json", json.dumps(plan))
    out = subprocess.run(
        [sys.executable, "-m", "toolrun", "check", "plan.json", "--format", "json",
         "--fail-on", "never"],
        cwd=ws, capture_output=True, text=True, check=False,
    )
    results = json.loads(out.stdout)["results"]
    assert [r["decision"] for r in results] == ["allow", "allow", "ask"], out.stderr
    assert "outside the workspace" in results[2]["reason"]  # where the link now leads
