"""SIGHUP (the terminal closed) is an interrupt like Ctrl-C (#27 item 9): a real
``python -m toolrun exec`` and real signals. The running call gets an ``interrupted``
result, the later calls too, the journal an ``end`` record; exit 129."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.processes import journal_records
from tests.faults.b_support import BOUND_S, nothing_left, signalled


def _plan(ws: Path, first: dict[str, object]) -> Path:
    (ws / "toolrun.yaml").write_text(
        json.dumps({"permissions": {"allow": ["Bash", "Read", "Write"]}})
    )
    calls = [first, {"tool": "Bash", "input": {"command": "echo later"}},
             {"tool": "Write", "input": {"file_path": "later.txt", "content": "x"}}]
    (ws / "plan.json").write_text(json.dumps({"turns": [{"calls": [c]} for c in calls]}))
    return ws / "started"


def _sleeper(ws: Path) -> dict[str, object]:
    return {"tool": "Bash", "input": {"command": f"touch {ws / 'started'}; sleep 300"}}


def _stubborn(ws: Path) -> dict[str, object]:  # ignores SIGTERM: the kill must follow
    script = ws / "stubborn.sh"
    script.write_text(f"#!/bin/sh\ntrap '' TERM\ntouch {ws / 'started'}\n"
                      "while :; do sleep 0.05; done\n")
    script.chmod(0o755)
    return {"tool": "Bash", "input": {"command": "./stubborn.sh"}}


def _background(ws: Path) -> dict[str, object]:  # leaves a job behind
    return {"tool": "Bash",
            "input": {"command": f"(sleep 300 &) ; touch {ws / 'started'}; sleep 300"}}


def _python(ws: Path) -> dict[str, object]:  # a process of its own under the shell
    (ws / "wait.py").write_text(
        f"import pathlib, time\npathlib.Path({str(ws / 'started')!r}).touch()\ntime.sleep(300)\n"
    )
    return {"tool": "Bash", "input": {"command": f"{sys.executable} wait.py"}}


@pytest.mark.parametrize("first", [_sleeper, _stubborn, _background, _python])
def test_sighup_interrupts_the_run_like_ctrl_c(tmp_path: Path, first: object) -> None:
    started = _plan(tmp_path, first(tmp_path))  # type: ignore[operator]
    ended = signalled(tmp_path, signal.SIGHUP, started.exists, "exec", "plan.json",
                      "--format", "jsonl")
    assert ended.code == 129, ended.stderr
    assert ended.statuses() == ["interrupted", "interrupted", "interrupted"]
    assert "Traceback" not in ended.stderr
    assert ended.seconds < BOUND_S
    assert not (tmp_path / "later.txt").exists()
    records = journal_records(tmp_path)
    assert records[-1]["event"] == "end" and records[-1]["interrupted"] is True
    assert sum(r["event"] == "result" for r in records) == 3
    assert not nothing_left(tmp_path)


def test_a_second_signal_after_sighup_exits_at_once_with_129(tmp_path: Path) -> None:
    started = _plan(tmp_path, _stubborn(tmp_path))
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolrun", "exec", "plan.json", "--format", "jsonl"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    with proc:
        while not started.exists():
            assert proc.poll() is None
        proc.send_signal(signal.SIGHUP)
        proc.send_signal(signal.SIGHUP)
        proc.communicate(timeout=60)
    assert proc.returncode == 129
    assert journal_records(tmp_path)[-1]["event"] == "end"
    assert not nothing_left(tmp_path)


def test_under_nohup_sighup_is_still_ignored(tmp_path: Path) -> None:
    (tmp_path / "toolrun.yaml").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
    started = tmp_path / "started"
    (tmp_path / "plan.json").write_text(json.dumps({"calls": [
        {"tool": "Bash", "input": {"command": f"touch {started}; sleep 1; echo done"}}]}))
    proc = subprocess.Popen(
        ["nohup", sys.executable, "-m", "toolrun", "exec", "plan.json", "--format", "jsonl"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    with proc:
        while not started.exists():
            assert proc.poll() is None
        proc.send_signal(signal.SIGHUP)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert json.loads(out)["status"] == "ok"
