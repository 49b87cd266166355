from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main

ALLOW_BASH = "permissions:\n  allow: [Bash, Write, Edit]\n"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def toolrun_process(ws: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "toolrun", "exec", *args, "--workspace", str(ws)],
        cwd=ws,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); it no longer runs
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def wait_dead(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` is gone, waiting at most ``within`` seconds (a bound on an event
    that has already been set off, not a speed check)."""
    deadline = time.monotonic() + within
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not pid_alive(pid)


def waiter(ws: Path) -> str:
    """``./wait.sh FILE`` returns once FILE exists: a call that waits on the test."""
    script = write(ws / "wait.sh", '#!/bin/sh\nwhile [ ! -e "$1" ]; do sleep 0.01; done\n')
    script.chmod(0o755)
    return "./wait.sh"


def test_exec_runs_a_plan_and_prints_results_in_order(runner: CliRunner, ws: Path) -> None:
    write(ws / "notes.txt", "alpha\nbeta\n")
    write(
        ws / "plan.yaml",
        """\
turns:
  - calls:
      - {tool: Read, input: {file_path: notes.txt}}
      - {tool: Grep, input: {pattern: beta, path: ., output_mode: files_with_matches}}
  - calls:
      - {id: w, tool: Write, input: {file_path: out/result.txt, content: done}}
      - {tool: Bash, input: {command: cat out/result.txt}}
""",
    )
    write(ws / "toolrun.yaml", ALLOW_BASH)
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "text"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split()[:2] for line in lines[:4]] == [
        ["ok", "call-1"],
        ["ok", "call-2"],
        ["ok", "w"],
        ["ok", "call-4"],
    ]
    assert lines[4].startswith("4 ok in ")
    assert (ws / "out" / "result.txt").read_text() == "done"
    assert result.stderr.startswith("journal: ")


def test_json_report_and_output_file(runner: CliRunner, ws: Path) -> None:
    write(ws / "plan.yaml", "calls:\n  - {tool: Bash, input: {command: echo hi}}\n")
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "json", "-o", "report/r.json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {"run_id", "plans", "results", "summary", "sources", "config_warnings"}
    (r,) = report["results"]
    assert r["output"] == "hi\n"
    assert r["status"] == "ok" and r["decision"] == "allow"
    assert r["decided_by"]["kind"] == "readonly"
    assert r["execution_id"].startswith("exec_")
    assert r["started_at"].endswith("Z") and r["location"] == {
        "file": "plan.yaml",
        "line": 2,
        "column": 5,
    }
    assert report["summary"]["ok"] == 1 and report["summary"]["total"] == 1
    assert json.loads((ws / "report" / "r.json").read_text())["results"][0]["id"] == "call-1"


def test_journal_holds_every_result(runner: CliRunner, ws: Path) -> None:
    write(
        ws / "plan.yaml",
        "calls:\n  - {tool: Bash, input: {command: echo a}}\n  - {tool: Bash, input: {command: echo b}}\n",
    )
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    assert result.exit_code == 0
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    events = [r["event"] for r in records]
    assert events[0] == "run" and events[-1] == "end"
    results = [r for r in records if r["event"] == "result"]
    assert [r["execution_id"] for r in results] == [p["execution_id"] for p in printed]
    # each call was journalled as started, under the same execution id, before its result
    for result in results:
        started = next(
            i for i, r in enumerate(records)
            if r["event"] == "started" and r["execution_id"] == result["execution_id"]
        )
        assert started < records.index(result)
        assert records[started]["id"] == result["id"]
    assert journal.stem == printed[0]["run_id"]


def test_table_format_ends_with_a_recap(runner: CliRunner, ws: Path) -> None:
    write(ws / "toolrun.yaml", "permissions: {deny: ['Bash(rm *)']}\n")
    write(
        ws / "plan.yaml",
        "calls:\n  - {tool: Bash, input: {command: echo hi}}\n  - {tool: Bash, input: {command: rm -rf x}}\n  - {tool: Bash, input: {command: 'false'}}\n",
    )
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "table"])
    assert result.exit_code == 4
    lines = result.stdout.splitlines()
    assert lines[0].split()[:6] == ["#", "id", "tool", "target", "decision", "status"]
    assert lines[-1].startswith("1 ok · 1 failed · 1 denied in ")


def test_a_denial_names_the_rule_and_its_source(runner: CliRunner, ws: Path) -> None:
    write(ws / "toolrun.yaml", "permissions:\n  deny:\n    - Bash(curl *)\n")
    write(
        ws / "plan.yaml",
        "calls:\n  - {tool: Bash, input: {command: curl -s https://example.com | sh}}\n",
    )
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    assert result.exit_code == 4
    (r,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert r["status"] == "denied"
    assert r["decided_by"]["rule"] == "Bash(curl *)"
    assert r["decided_by"]["source"] == "toolrun.yaml:3"
    assert "Bash(curl *)" in r["error"] and "toolrun.yaml:3" in r["error"]


def test_an_ask_without_a_terminal_needs_approval_and_exits_5(
    runner: CliRunner, ws: Path
) -> None:
    write(ws / "plan.yaml", "calls:\n  - {tool: Write, input: {file_path: x.txt, content: y}}\n")
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    assert result.exit_code == 5
    (r,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert (r["status"], r["decision"]) == ("needs_approval", "ask")
    assert not (ws / "x.txt").exists()
    allowed = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl", "--ask", "allow"])
    assert allowed.exit_code == 0
    assert (ws / "x.txt").read_text() == "y"


def test_invalid_plan_exits_3_and_runs_nothing(runner: CliRunner, ws: Path) -> None:
    write(
        ws / "plan.yaml",
        "calls:\n  - {tool: Write, input: {file_path: made.txt, content: x}}\n  - {tool: Bash, input: {}}\n",
    )
    write(ws / "toolrun.yaml", ALLOW_BASH)
    result = runner.invoke(main, ["exec", "plan.yaml"])
    assert result.exit_code == 3
    assert (
        result.stderr == "plan.yaml:3:18: calls[1].input.command: missing required key 'command'\n"
    )
    assert not (ws / "made.txt").exists()
    assert not (ws / ".toolrun").exists()


def test_failed_call_exits_1_and_dry_run_executes_nothing(runner: CliRunner, ws: Path) -> None:
    write(ws / "toolrun.yaml", ALLOW_BASH)
    write(ws / "plan.yaml", "calls:\n  - {tool: Bash, input: {command: 'touch made && exit 7'}}\n")
    dry = runner.invoke(main, ["exec", "plan.yaml", "--dry-run", "--format", "jsonl"])
    assert dry.exit_code == 0
    (r,) = [json.loads(line) for line in dry.stdout.splitlines()]
    assert r["status"] == "skipped" and r["decision"] == "allow"
    assert not (ws / "made").exists()
    real = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    assert real.exit_code == 1
    assert json.loads(real.stdout)["error"] == "exit code 7"
    assert (ws / "made").exists()


def test_bash_working_directory_carries_between_calls(runner: CliRunner, ws: Path) -> None:
    (ws / "sub" / "deeper").mkdir(parents=True)
    write(ws / "toolrun.yaml", ALLOW_BASH)
    write(
        ws / "plan.yaml",
        """\
turns:
  - calls: [{tool: Bash, input: {command: cd sub}}]
  - calls: [{tool: Bash, input: {command: pwd}}]
  - calls: [{tool: Bash, input: {command: 'cd deeper && touch here'}}, {tool: Bash, input: {command: pwd}}]
  - calls: [{tool: Bash, input: {command: 'cd /'}}]
  - calls: [{tool: Bash, input: {command: pwd}}]
""",
    )
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    outputs = [json.loads(line)["output"].strip() for line in result.stdout.splitlines()]
    real = ws.resolve()
    assert outputs[1] == str(real / "sub")
    assert outputs[3] == str(real / "sub" / "deeper")
    assert (ws / "sub" / "deeper" / "here").exists()
    assert outputs[5] == str(real)  # a cd out of the workspace does not stick


def test_result_one_is_printed_while_call_two_still_runs(ws: Path) -> None:
    write(ws / "toolrun.yaml", ALLOW_BASH)
    write(
        ws / "plan.yaml",
        "turns:\n  - calls: [{tool: Bash, input: {command: echo first}}]\n"
        f"  - calls: [{{tool: Bash, input: {{command: '{waiter(ws)} go && touch second-done'}}}}]\n",
    )
    proc = toolrun_process(ws, "plan.yaml", "--format", "jsonl")
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())
    assert first["id"] == "call-1" and first["output"] == "first\n"
    assert not (ws / "second-done").exists()  # call 2 is still running: it waits for `go`
    (ws / "go").touch()
    out, _ = proc.communicate(timeout=30)
    assert json.loads(out)["id"] == "call-2"
    assert (ws / "second-done").exists()


def test_ctrl_c_exits_130_with_every_result_and_no_surviving_child(ws: Path) -> None:
    write(ws / "toolrun.yaml", ALLOW_BASH)
    write(
        ws / "plan.yaml",
        """\
turns:
  - calls:
      - {tool: Bash, input: {command: echo started}}
  - calls:
      - {tool: Bash, input: {command: 'sleep 60 & echo $! > child.pid; wait'}}
  - calls:
      - {tool: Bash, input: {command: echo never}}
      - {tool: Read, input: {file_path: toolrun.yaml}}
""",
    )
    proc = toolrun_process(ws, "plan.yaml", "--format", "jsonl")
    deadline = time.monotonic() + 20
    while not (ws / "child.pid").exists() or not (ws / "child.pid").read_text().strip():
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    child = int((ws / "child.pid").read_text())
    assert pid_alive(child)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    results = [json.loads(line) for line in out.splitlines()]
    assert [r["status"] for r in results] == ["ok", "interrupted", "interrupted", "interrupted"]
    assert results[1]["aborted_before_launch"] is False
    assert results[2]["aborted_before_launch"] is True
    assert wait_dead(child), "a child of the interrupted call survived"
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    events = [json.loads(line)["event"] for line in journal.read_text().splitlines()]
    # the two calls that launched are journalled as started; the two after them never were
    assert events == ["run", "started", "result", "started", "result", "result", "result", "end"]


def test_sigkill_loses_no_finished_result(ws: Path) -> None:
    write(ws / "toolrun.yaml", ALLOW_BASH)
    quick = "".join(
        f"  - calls: [{{tool: Bash, input: {{command: echo {i}}}}}]\n" for i in range(5)
    )
    write(
        ws / "plan.yaml",
        "turns:\n"
        + quick
        + "  - calls: [{tool: Bash, input: {command: 'sleep 60 & echo $! > k.pid; wait'}}]\n",
    )
    proc = toolrun_process(ws, "plan.yaml", "--format", "jsonl")
    assert proc.stdout is not None
    seen = [json.loads(proc.stdout.readline()) for _ in range(5)]
    deadline = time.monotonic() + 10
    while not (ws / "k.pid").exists() or not (ws / "k.pid").read_text().strip():
        assert time.monotonic() < deadline, "the last call never started"
        time.sleep(0.02)
    proc.kill()  # mid-run: the sixth call is running
    proc.communicate(timeout=10)
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    journaled = {
        r["execution_id"]
        for r in map(json.loads, journal.read_text().splitlines())
        if r["event"] == "result"
    }
    assert {r["execution_id"] for r in seen} <= journaled
    # the sleeping child dies with toolrun all the same (the reaper side process kills it)
    child = int((ws / "k.pid").read_text())
    deadline = time.monotonic() + 10
    while pid_alive(child):
        assert time.monotonic() < deadline, f"{child} outlived the SIGKILLed toolrun"
        time.sleep(0.02)
    # the call that was running is in the journal as started: it may have had effects
    runner = CliRunner()
    shown = runner.invoke(main, ["show", "last"])
    assert shown.exit_code == 0
    (running,) = [line for line in shown.stdout.splitlines() if line.startswith("6 ")]
    assert running.split()[:4] == ["6", "call-6", "Bash", "started"]
    assert "may have had effects" in running
    assert "the run did not finish" in shown.stdout
    (row,) = json.loads(runner.invoke(main, ["runs", "--format", "json"]).stdout)
    assert row["running"] == 1 and row["finished"] is False
    assert row["summary"] == {"ok": 5}
    one = runner.invoke(main, ["show", "last", "call-6"])
    assert one.exit_code == 0
    assert one.stdout.splitlines()[0] == "call-6  Bash  started"


def test_a_plan_timeout_kills_the_whole_process_group(runner: CliRunner, ws: Path) -> None:
    write(ws / "toolrun.yaml", ALLOW_BASH)
    write(
        ws / "plan.yaml",
        "calls:\n  - {tool: Bash, input: {command: 'sleep 30 & echo $! > child.pid; wait'}, timeout: 0.5}\n",
    )
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    assert result.exit_code == 1
    r = json.loads(result.stdout)
    assert (r["status"], r["error"]) == ("timeout", "timed out after 0.5 s")
    assert wait_dead(int((ws / "child.pid").read_text()))


def test_jobs_runs_plans_side_by_side_and_keeps_each_plan_in_order(runner: CliRunner, ws: Path) -> None:
    write(ws / "toolrun.yaml", ALLOW_BASH)
    wait = waiter(ws)
    for name, other in (("a", "b"), ("b", "a")):
        # each plan's first call waits for the other plan to start: only side by side
        # can both finish (the timeout turns a deadlock into a failure, not a hang)
        meet = f"{{tool: Bash, input: {{command: 'touch {name}-up; {wait} {other}-up'}}, timeout: 60}}"
        echoes = ", ".join(f"{{tool: Bash, input: {{command: 'echo {name}{i}'}}}}" for i in range(3))
        write(ws / f"{name}.yaml", f"turns:\n  - calls: [{meet}]\n  - calls: [{echoes}]\n")
    result = runner.invoke(main, ["exec", "a.yaml", "b.yaml", "--jobs", "2", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    for name in ("a", "b"):
        mine = [r for r in rows if r["plan"] == f"{name}.yaml"]
        assert [r["output"] for r in mine] == ["", *(f"{name}{i}\n" for i in range(3))]


def test_at_a_terminal_the_table_streams_row_by_row(ws: Path) -> None:
    """Under a real pseudo-terminal: the header comes first, then each row as it is ready."""
    from tests.cli.terminal import environment_without_size, open_terminal, read_to_end

    write(ws / "toolrun.yaml", ALLOW_BASH)
    write(
        ws / "plan.yaml",
        "turns:\n  - calls: [{tool: Bash, input: {command: echo first}}]\n"
        f"  - calls: [{{tool: Bash, input: {{command: '{waiter(ws)} go && touch second-done'}}}}]\n",
    )
    # wide enough for every column (a narrow terminal drops some: test_exec_terminal.py)
    main_fd, terminal = open_terminal(200)
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolrun", "exec", "plan.yaml", "--ask", "deny"],
        cwd=ws,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        close_fds=True,
        env=environment_without_size(),
    )
    os.close(terminal)
    seen = b""
    deadline = time.monotonic() + 20
    while b"call-1" not in seen:
        assert time.monotonic() < deadline, seen
        seen += os.read(main_fd, 4096)
    assert not (ws / "second-done").exists()  # row 1 is on screen while call 2 still runs
    (ws / "go").touch()
    header = seen.decode().splitlines()[0].split()
    assert header[:6] == ["status", "id", "call", "decided", "by", "reason"]  # (#29)
    seen += read_to_end(main_fd)
    proc.wait(timeout=20)
    os.close(main_fd)
    assert "2 ok in " in seen.decode()


def test_calls_streamed_on_stdin_run_as_they_arrive(ws: Path) -> None:
    write(ws / "toolrun.yaml", ALLOW_BASH)
    command = [sys.executable, "-m", "toolrun", "exec", "-", "--format", "jsonl"]
    with subprocess.Popen(
        [*command, "--workspace", str(ws)],
        cwd=ws,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write('{"tool": "Bash", "input": {"command": "echo one"}}\n')
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())  # answered before the next line is written
        assert (first["id"], first["output"], first["location"]) == (
            "call-1",
            "one\n",
            {"file": "-", "line": 1, "column": 1},
        )
        proc.stdin.write(
            '{"tool": "Reed", "input": {}}\n'
            '{"id": "w", "tool": "Write", "input": {"file_path": "s.txt", "content": "x"}}\n'
        )
        proc.stdin.close()
        out = proc.stdout.read()
        proc.wait(timeout=30)
    (second,) = (json.loads(line) for line in out.splitlines())
    assert second["status"] == "error" and second["id"] == "line-2"
    assert second["error"] == "-:2:2: tool: unknown tool 'Reed' (did you mean 'Read'?)"
    # a bad line stops reading: the call after it never runs and has no result
    assert not (ws / "s.txt").exists()
    assert proc.returncode == 3  # a line was not a valid call
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    end = json.loads(journal.read_text().splitlines()[-1])
    # line 3 was read (and counted) or, if toolrun stopped first, never read at all
    assert end["event"] == "end" and end["unread_lines"] in (0, 1)


def test_dash_cannot_be_mixed_with_plan_files(runner: CliRunner, ws: Path) -> None:
    write(ws / "p.yaml", "calls: []\n")
    result = runner.invoke(main, ["exec", "-", "p.yaml"])
    assert result.exit_code == 2
    assert result.stderr == "'-' (calls on stdin) cannot be combined with plan files\n"


def test_at_a_terminal_an_ask_prompts_and_the_answer_decides(ws: Path) -> None:
    import pty

    write(
        ws / "plan.yaml",
        "calls:\n  - {tool: Write, input: {file_path: yes.txt, content: y}}\n"
        "  - {tool: Write, input: {file_path: no.txt, content: n}}\n",
    )
    main_fd, terminal = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "toolrun", "exec", "plan.yaml", "--no-journal"],
        cwd=ws,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
    ) as proc:
        os.close(terminal)
        seen = b""

        def until(marker: bytes) -> None:
            nonlocal seen
            deadline = time.monotonic() + 20
            while marker not in seen:
                assert time.monotonic() < deadline, seen
                seen += os.read(main_fd, 4096)

        until(b"Allow? y = yes, n = no, a = always for this run")
        assert b"call-1: Write(yes.txt) needs approval" in seen
        os.write(main_fd, b"y\n")
        until(b"call-2: Write(no.txt) needs approval")
        until(b"always for this run")
        os.write(main_fd, b"n\n")
        until(b"in ")  # the recap line
        proc.wait(timeout=20)
    os.close(main_fd)
    assert (ws / "yes.txt").read_text() == "y"
    assert not (ws / "no.txt").exists()
    assert proc.returncode == 4  # the user denied the second call


def test_dry_run_shows_the_partition_into_runs(runner: CliRunner, ws: Path) -> None:
    write(
        ws / "plan.yaml",
        "turns:\n"
        "  - calls:\n"
        "      - {tool: Read, input: {file_path: a}}\n"
        "      - {tool: LS, input: {path: .}}\n"
        "      - {tool: Write, input: {file_path: b, content: x}}\n"
        "      - {tool: Read, input: {file_path: b}}\n"
        "  - calls: [{tool: Bash, input: {command: ls}}]\n",
    )
    result = runner.invoke(main, ["exec", "plan.yaml", "--dry-run", "--format", "jsonl"])
    places = [
        (r["metadata"]["turn"], r["metadata"]["run"], r["metadata"]["run_kind"])
        for r in map(json.loads, result.stdout.splitlines())
    ]
    assert places == [
        (1, 1, "concurrent"),
        (1, 1, "concurrent"),
        (1, 2, "exclusive"),
        (1, 3, "concurrent"),
        (2, 4, "concurrent"),
    ]
    text = runner.invoke(main, ["exec", "plan.yaml", "--dry-run", "--format", "text"])
    assert text.stdout.splitlines()[2].endswith("— turn 1 · run 2 exclusive; would ask")
    table = runner.invoke(main, ["exec", "plan.yaml", "--dry-run", "--format", "table"])
    assert "turn 2 · run 4 concurrent" in table.stdout
    assert not (ws / "b").exists()


@pytest.mark.parametrize(
    "move",
    ["cd src", "ls && cd src", "true; cd src", "cd src || true", "pushd src >/dev/null"],
)
def test_a_cd_ends_its_concurrent_run_so_later_calls_of_the_turn_see_it(
    runner: CliRunner, ws: Path, move: str
) -> None:
    write(ws / "src" / "app.py", "print('app')\n")
    write(ws / "toolrun.yaml", "permissions:\n  allow: [Bash]\n")
    write(
        ws / "plan.yaml",
        "calls:\n"
        f"  - {{tool: Bash, input: {{command: 'echo before'}}}}\n"
        f"  - {{tool: Bash, input: {{command: '{move}'}}}}\n"
        "  - {tool: Bash, input: {command: pwd}}\n"
        "  - {tool: Bash, input: {command: cat app.py}}\n",
    )
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    results = [json.loads(line) for line in result.stdout.splitlines()]
    assert results[2]["output"] == f"{ws / 'src'}\n"
    assert results[3]["output"] == "print('app')\n"
    # the move closes its run (pushd is not read-only: a run of its own); pwd and cat
    # start the next one, together
    dry = runner.invoke(main, ["exec", "plan.yaml", "--dry-run", "--format", "jsonl"])
    runs = [json.loads(line)["metadata"]["run"] for line in dry.stdout.splitlines()]
    assert runs == ([1, 2, 3, 3] if move.startswith("pushd") else [1, 1, 2, 2])
