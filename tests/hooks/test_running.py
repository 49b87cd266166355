"""Running hooks: stdin and environment, timeouts, process groups, big output,
de-duplication, concurrency, config-order rewrites and sequential chains."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import anyio
import pytest

from tests.hooks.conftest import Hooks, py_hook, wait_gone, wait_none_running
from toolrun.hooks import HookRunner

pytestmark = pytest.mark.anyio

DUMP = """
import json, os, sys
data = json.load(sys.stdin)
data["_env"] = {k: os.environ.get(k) for k in ("CLAUDE_PROJECT_DIR", "TOOLRUN_RUN_ID")}
data["_pwd"] = os.getcwd()
with open(sys.argv[1], "w") as f:
    json.dump(data, f)
"""


async def test_stdin_json_and_environment(hooks: Hooks, ws: Path) -> None:
    command = py_hook(ws, "dump.py", DUMP) + " seen.json"
    (ws / "sub").mkdir()
    config = hooks.add("PreToolUse", "Bash", command).config(mode="acceptEdits")
    runner = HookRunner(config, run_id="run-42", transcript_path="/ws/.toolrun/runs/run-42.jsonl")
    await runner.pre_tool_use("Bash", {"command": "ls -la"}, call_id="call-7", cwd=ws / "sub")
    seen = json.loads((ws / "seen.json").read_text())
    assert seen == {
        "session_id": "run-42",
        "transcript_path": "/ws/.toolrun/runs/run-42.jsonl",
        "cwd": str(ws / "sub"),
        "hook_event_name": "PreToolUse",
        "permission_mode": "acceptEdits",
        "tool_name": "Bash",
        "tool_input": {"command": "ls -la"},
        "tool_use_id": "call-7",
        "_env": {"CLAUDE_PROJECT_DIR": str(ws), "TOOLRUN_RUN_ID": "run-42"},
        "_pwd": str(ws),
    }


async def test_timeout_open_kills_the_process_group(hooks: Hooks, ws: Path) -> None:
    # the background child is found by a marker in its command line, whether or not the
    # hook got as far as anything else before its timeout
    marker = f"bg-{uuid.uuid4().hex}"
    command = f"sh -c 'sleep 60; : {marker}' & sleep 30"
    runner = hooks.add("PreToolUse", "Bash", (command, {"timeout": 0.5})).runner()
    result = await runner.pre_tool_use("Bash", {"command": "ls"}, call_id="c1")
    (run,) = result.runs
    assert (run.timed_out, run.failure, run.outcome, run.exit_code) == (
        True,
        "timeout",
        "non_blocking_error",
        None,
    )
    assert run.error == "timed out after 0.5 s"
    assert result.decision is None
    assert wait_none_running(marker)


async def test_timeout_closed_denies_and_kills_the_process_group(hooks: Hooks, ws: Path) -> None:
    marker = f"bg-{uuid.uuid4().hex}"
    command = f"sh -c 'sleep 60; : {marker}' & sleep 30"
    # no per-hook timeout: toolrun.hookTimeout applies
    runner = hooks.add("PreToolUse", "Bash", command).runner(failure="closed", timeout=0.5)
    result = await runner.pre_tool_use("Bash", {"command": "ls"}, call_id="c1")
    assert result.runs[0].timed_out
    assert result.decision == "deny"
    assert result.reason is not None
    assert "timed out after 0.5 s" in result.reason and command in result.reason
    assert wait_none_running(marker)


async def test_hook_ignoring_sigterm_is_killed(hooks: Hooks, ws: Path) -> None:
    marker = f"stubborn-{uuid.uuid4().hex}"
    command = f"trap '' TERM; while :; do sleep 0.05; done; : {marker}"
    runner = hooks.add("PreToolUse", "", (command, {"timeout": 0.3})).runner()
    result = await runner.pre_tool_use("Read", {"file_path": "a"}, call_id="c1")
    assert result.runs[0].timed_out
    assert wait_none_running(marker)


async def test_cancelling_the_caller_kills_the_hook(hooks: Hooks, ws: Path) -> None:
    runner = hooks.add("PreToolUse", "", "sleep 60 & echo $! > bg.pid; wait").runner()
    with anyio.move_on_after(0.5):
        await runner.pre_tool_use("Read", {"file_path": "a"}, call_id="c1")
    assert wait_gone(int((ws / "bg.pid").read_text()))


async def test_background_child_holding_stdout_does_not_hang(hooks: Hooks, ws: Path) -> None:
    runner = hooks.add("PreToolUse", "", ("sleep 60 & echo $! > bg.pid; exit 0", {"timeout": 20}))
    result = await runner.runner().pre_tool_use("Read", {"file_path": "a"}, call_id="c1")
    (run,) = result.runs
    assert (run.outcome, run.exit_code, run.timed_out) == ("success", 0, False)
    assert wait_gone(int((ws / "bg.pid").read_text()))


async def test_huge_stdout_and_stderr(hooks: Hooks, ws: Path) -> None:
    command = py_hook(ws, "loud.py", """
import sys
chunk = "x" * 65536
for _ in range(80):  # 5 MiB on each stream, interleaved
    sys.stdout.write(chunk)
    sys.stderr.write(chunk)
sys.stdout.flush()
sys.exit(1)
""")
    result = await hooks.add("PreToolUse", "", command).runner().pre_tool_use(
        "Read", {"file_path": "a"}, call_id="c1"
    )
    (run,) = result.runs
    assert (run.exit_code, run.outcome, run.timed_out) == (1, "non_blocking_error", False)
    assert run.error is not None and len(run.error) < 3000


async def test_huge_json_reason_is_kept_capped(hooks: Hooks, ws: Path) -> None:
    command = py_hook(ws, "big.py", """
import json
print(json.dumps({"decision": "block", "reason": "r" * 500_000}))
""")
    result = await hooks.add("PreToolUse", "", command).runner().pre_tool_use(
        "Read", {"file_path": "a"}, call_id="c1"
    )
    assert result.decision == "deny"
    assert result.reason is not None and 1000 < len(result.reason) <= 10_000


@pytest.mark.parametrize("command", ["exit 0", "sleep 0.2; exit 0", "exec 0<&-; sleep 0.1"])
async def test_hook_that_reads_no_stdin(hooks: Hooks, command: str) -> None:
    big = {"command": "echo " + "y" * 4_000_000}
    result = await hooks.add("PreToolUse", "Bash", command).runner().pre_tool_use(
        "Bash", big, call_id="c1"
    )
    (run,) = result.runs
    assert (run.outcome, run.exit_code, run.timed_out) == ("success", 0, False)


async def test_identical_command_configured_twice_runs_once(hooks: Hooks, ws: Path) -> None:
    command = "echo run >> count.txt"
    hooks.add("PreToolUse", "Bash", command)
    hooks.add("PreToolUse", "*", command, "echo other >> count.txt")
    hooks.add("PostToolUse", "Bash", command)
    runner = hooks.runner()
    pre = await runner.pre_tool_use("Bash", {"command": "ls"}, call_id="c1")
    assert (ws / "count.txt").read_text().splitlines().count("run") == 1
    assert len(pre.runs) == 2
    (skipped,) = pre.skipped
    assert skipped.command == command and "already runs from" in skipped.reason
    await runner.post_tool_use("Bash", {"command": "ls"}, "out", call_id="c1")
    # once per event per call: the PostToolUse occurrence runs too
    assert (ws / "count.txt").read_text().splitlines().count("run") == 2


async def test_identical_command_from_two_config_files_runs_once(ws: Path) -> None:
    from toolrun.config import load_config

    (ws / "toolrun.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n"
        "        - command: echo x >> count.txt\n"
    )
    settings = ws / "extra.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "", "hooks": [{"type": "command", "command": "echo x >> count.txt"}]}
    ]}}))
    config = load_config(workspace=ws, settings_files=[settings])
    runner = HookRunner(config, run_id="r")
    result = await runner.pre_tool_use("Bash", {"command": "ls"}, call_id="c1")
    assert (ws / "count.txt").read_text() == "x\n"
    assert len(result.runs) == 1 and len(result.skipped) == 1


async def test_hooks_of_one_event_run_concurrently(hooks: Hooks) -> None:
    # The first hook only succeeds if the second one runs while it waits.
    waiter = (
        "i=0; while [ ! -e second.flag ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; "
        "test -e second.flag"
    )
    runner = hooks.add("PreToolUse", "", waiter, "touch second.flag").runner()
    result = await runner.pre_tool_use("Read", {"file_path": "a"}, call_id="c1")
    assert [r.exit_code for r in result.runs] == [0, 0]


def _rewrite(value: str, delay: float = 0.0) -> str:
    out = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": value}}}
    )
    return f"sleep {delay}; echo '{out}'"


async def test_updated_input_applies_in_config_order_not_finish_order(hooks: Hooks) -> None:
    # the first hook (config order) finishes last; the second's rewrite still comes last
    hooks.add("PreToolUse", "Bash", _rewrite("from-first", 0.4))
    hooks.add("PreToolUse", "Bash", _rewrite("from-second"))
    result = await hooks.runner().pre_tool_use("Bash", {"command": "ls"}, call_id="c1")
    assert result.updated_input == {"command": "from-second"}
    assert [r.updated_input for r in result.runs] == [
        {"command": "from-first"},
        {"command": "from-second"},
    ]


APPEND = """
import json, sys
data = json.load(sys.stdin)
command = data["tool_input"]["command"]
with open("chain.log", "a") as f:
    f.write(command + "\\n")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "updatedInput": {"command": command + sys.argv[1]}}}))
"""


async def test_sequential_group_chains_rewrites(hooks: Hooks, ws: Path) -> None:
    append = py_hook(ws, "append.py", APPEND)
    hooks.add("PreToolUse", "Bash", f"{append} 1", f"{append} 2", f"{append} 3", sequential=True)
    result = await hooks.runner().pre_tool_use("Bash", {"command": "x"}, call_id="c1")
    assert (ws / "chain.log").read_text().splitlines() == ["x", "x1", "x12"]
    assert result.updated_input == {"command": "x123"}


async def test_sequential_group_alongside_a_concurrent_one(hooks: Hooks, ws: Path) -> None:
    append = py_hook(ws, "append.py", APPEND)
    hooks.add("PreToolUse", "Bash", f"{append} a", f"{append} b", sequential=True)
    hooks.add("PreToolUse", "Bash", _rewrite("parallel", 0.3))
    result = await hooks.runner().pre_tool_use("Bash", {"command": "x"}, call_id="c1")
    # the concurrent hook comes later in config order: its rewrite is applied last
    assert result.updated_input == {"command": "parallel"}
    assert result.runs[1].updated_input == {"command": "xab"}


async def test_sequential_hooks_run_one_after_another(hooks: Hooks) -> None:
    first = "test ! -e b.flag && touch a.flag && sleep 0.2 && test ! -e b.flag"
    second = "test -e a.flag && touch b.flag"
    hooks.add("PreToolUse", "", first, second, sequential=True)
    result = await hooks.runner().pre_tool_use("Read", {"file_path": "a"}, call_id="c1")
    assert [r.exit_code for r in result.runs] == [0, 0]


async def test_no_matching_hooks_runs_nothing(hooks: Hooks, ws: Path) -> None:
    runner = hooks.add("PreToolUse", "Edit", "touch ran.flag").runner()
    assert runner.has_hooks("PreToolUse") and not runner.has_hooks("PostToolUse")
    result = await runner.pre_tool_use("Bash", {"command": "ls"}, call_id="c1")
    assert result.runs == () and result.decision is None
    assert not (ws / "ran.flag").exists()


async def test_if_filter_in_the_runner(hooks: Hooks, ws: Path) -> None:
    hooks.add("PreToolUse", "Bash", ("echo $$ >> git.log", {"if": "Bash(git *)"}))
    runner = hooks.runner()
    fired = await runner.pre_tool_use("Bash", {"command": "cd x && git push"}, call_id="c1")
    quiet = await runner.pre_tool_use("Bash", {"command": "ls -la"}, call_id="c2")
    assert len(fired.runs) == 1 and fired.skipped == ()
    assert quiet.runs == () and "does not match" in quiet.skipped[0].reason
    assert len((ws / "git.log").read_text().splitlines()) == 1


async def test_workspace_missing_is_a_spawn_failure(hooks: Hooks, ws: Path) -> None:
    runner = hooks.add("PreToolUse", "", "true").runner(failure="closed")
    os.rmdir(ws)
    result = await runner.pre_tool_use("Read", {"file_path": "a"}, call_id="c1")
    assert result.runs[0].failure == "spawn_error"
    assert result.decision == "deny"
