"""Closing toolrun's terminal (#27 items 2 and 9): a real pseudo-terminal as toolrun's
controlling terminal, closed while a call runs. The kernel's SIGHUP interrupts the run:
every call has its result in the journal, the journal its ``end``, exit 129, and nothing
is left running (a Bash command, an MCP server and its child)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.processes import journal_records
from tests.faults.b_support import BOUND_S, nothing_left

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "server.py"


def _take_terminal() -> None:  # in the child: a session whose controlling terminal is fd 0
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _bash(ws: Path) -> dict[str, Any]:
    return {"tool": "Bash", "input": {"command": f"touch {ws / 'started'}; sleep 300"}}


def _mcp(ws: Path) -> dict[str, Any]:
    return {"tool": "mcp__notes__slow", "input": {"seconds": 300}}


def _started(ws: Path, first: str) -> bool:
    if first == "bash":
        return (ws / "started").exists()
    log = ws.parent / "server.log"
    return log.exists() and "call slow" in log.read_text()


@pytest.mark.parametrize("first", ["bash", "mcp"])
def test_closing_the_terminal_interrupts_the_run_and_leaves_nothing(
    tmp_path: Path, first: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    server = [str(SERVER), "--spawn-child", "--ignore-eof", "--log", str(tmp_path / "server.log")]
    (ws / "toolrun.yaml").write_text(json.dumps({
        "permissions": {"allow": ["Bash", "Write", "mcp__notes"]},
        "mcpServers": {"notes": {"command": sys.executable, "args": server}},
    }))
    calls = [(_bash if first == "bash" else _mcp)(ws),
             {"tool": "Write", "input": {"file_path": "later.txt", "content": "x"}}]
    (ws / "plan.json").write_text(json.dumps({"turns": [{"calls": [c]} for c in calls]}))
    ours, theirs = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolrun", "exec", "plan.json"],
        cwd=ws, stdin=theirs, stdout=theirs, stderr=theirs,
        preexec_fn=_take_terminal,  # noqa: PLW1509 - a controlling terminal needs it
    )
    os.close(theirs)
    try:
        deadline = time.monotonic() + 60
        while not _started(ws, first):
            assert proc.poll() is None and time.monotonic() < deadline
            try:  # keep the terminal's buffer from filling
                fcntl.fcntl(ours, fcntl.F_SETFL, os.O_NONBLOCK)
                os.read(ours, 65536)
            except BlockingIOError:
                pass
            time.sleep(0.05)
    finally:
        closed = time.monotonic()
        os.close(ours)  # the terminal closes: the kernel sends SIGHUP
    code = proc.wait(timeout=60)
    assert time.monotonic() - closed < BOUND_S
    assert code == 129
    records = journal_records(ws)
    results = [r for r in records if r["event"] == "result"]
    assert [r["status"] for r in results] == ["interrupted", "interrupted"]
    assert records[-1]["event"] == "end" and records[-1]["interrupted"] is True
    assert not (ws / "later.txt").exists()
    assert not nothing_left(tmp_path)
