"""Ctrl-C on a real toolrun process: `exec -` with an endless backlog, and a second
Ctrl-C. Real signals, real pipes; the tests wait on events, never on the clock
(how fast toolrun answers is measured by bench/interrupt.py)."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path

from tests.cli.processes import journal_records, spawn
from toolrun.commands.exec_stdin import MAX_LINE_BYTES, QUEUE_LINES

ALLOW = "permissions:\n  allow: [Bash]\n"
CALL = json.dumps({"tool": "Bash", "input": {"command": "echo hi"}}) + "\n"


def test_ctrl_c_on_an_endless_stream_stops_reading_and_counts_what_was_left(
    tmp_path: Path,
) -> None:
    (tmp_path / "toolrun.yaml").write_text(ALLOW)
    proc = spawn(tmp_path, "exec", "-", "--format", "text", stdin=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    written = 0

    def feed() -> None:  # like `yes CALL | toolrun exec -`: never ends by itself
        nonlocal written
        try:
            while True:
                proc.stdin.write(CALL.encode() * 64)  # type: ignore[union-attr]
                written += 64
        except (BrokenPipeError, ValueError, OSError):
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    with proc:
        first = proc.stdout.readline().decode()
        assert first.startswith("ok ")  # calls run while the stream goes on
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    writer.join(timeout=10)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    lines = (first.encode() + out).decode().splitlines()
    results = [line for line in lines if line.startswith(("ok ", "interrupted "))]
    recap = lines[-1]
    assert "of stdin read but never run" in recap
    unread = int(recap.split("; ")[-1].split()[0])
    # backpressure: toolrun held at most its queue and one turn it had taken, however
    # much was on offer; calls it never read got no result
    assert unread <= QUEUE_LINES + 64
    assert len(results) + unread <= written
    records = journal_records(tmp_path)
    end = records[-1]
    assert end["event"] == "end" and end["interrupted"] is True
    assert end["unread_lines"] == unread
    assert sum(r["event"] == "result" for r in records) == len(results)


def test_a_second_signal_exits_at_once_with_the_journal_ended(tmp_path: Path) -> None:
    (tmp_path / "toolrun.yaml").write_text(ALLOW)
    # the call ignores SIGTERM, so winding it down takes toolrun a while
    script = tmp_path / "stubborn.sh"
    script.write_text("#!/bin/sh\ntrap '' TERM\necho $$ > running\nwhile :; do sleep 0.01; done\n")
    script.chmod(0o755)
    (tmp_path / "plan.yaml").write_text(
        "calls:\n  - {tool: Bash, input: {command: ./stubborn.sh}}\n"
    )
    proc = spawn(tmp_path, "exec", "plan.yaml", "--format", "jsonl")
    with proc:
        running = tmp_path / "running"
        while not running.exists() or not running.read_text().strip():  # the event: it runs
            assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGTERM)  # a second signal before the first is wound down
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    end = journal_records(tmp_path)[-1]
    assert end["event"] == "end" and end["forced"] is True and end["interrupted"] is True
    # leaving at once leaves nothing behind: the stubborn call's process was killed
    stubborn = int(running.read_text())
    deadline = time.monotonic() + 10  # a bound for a SIGKILL already sent, not a speed check
    while _alive(stubborn):
        assert time.monotonic() < deadline, "the stubborn call outlived toolrun"
        time.sleep(0.01)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone between open and read
        return False


def test_ctrl_c_while_waiting_on_a_silent_stdin_ends_the_run(tmp_path: Path) -> None:
    """The writer keeps stdin open and says nothing more: Ctrl-C must not wait for it."""
    (tmp_path / "toolrun.yaml").write_text(ALLOW)
    proc = spawn(tmp_path, "exec", "-", "--format", "jsonl", stdin=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    with proc:
        proc.stdin.write(CALL.encode())
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["status"] == "ok"
        proc.send_signal(signal.SIGINT)  # toolrun now waits for the next line
        assert proc.wait(timeout=60) == 130  # stdin is still open
        proc.stdin.close()
    end = journal_records(tmp_path)[-1]
    assert end["event"] == "end" and end["interrupted"] is True and end["unread_lines"] == 0


def test_an_endless_line_is_an_error_not_a_memory_sink(tmp_path: Path) -> None:
    (tmp_path / "toolrun.yaml").write_text(ALLOW)
    huge = b'{"tool": "Bash", "input": {"command": "echo ' + b"x" * (MAX_LINE_BYTES + 10)
    after = json.dumps({"tool": "Bash", "input": {"command": "touch ran"}}).encode() + b"\n"
    proc = spawn(tmp_path, "exec", "-", "--format", "jsonl", stdin=subprocess.PIPE)
    out, err = proc.communicate(CALL.encode() + huge + b'"}}\n' + after, timeout=120)
    assert proc.returncode == 3, err
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["status"] == "ok"
    assert (second["status"], second["id"]) == ("error", "line-2")
    assert f"longer than {MAX_LINE_BYTES} bytes" in second["error"]
    assert not (tmp_path / "ran").exists()  # reading stopped at the bad line
