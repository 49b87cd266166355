"""MCP servers never outlive toolrun (#27 item 2), and one that cannot be started fails
only the calls that use it (#26 point 7, #30 point 4). Real servers (tests/mcp), a real
``python -m toolrun``, real signals, and the process table looked at after."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.faults.b_support import BOUND_S, nothing_left, run, signalled, toolrun

MCP = Path(__file__).resolve().parents[1] / "mcp"
SERVER, SDK_SERVER = MCP / "server.py", MCP / "sdk_server.py"


def _servers(tmp: Path) -> dict[str, dict[str, Any]]:
    """Four spellings of a stdio server with a call that runs until stopped: each logs to
    ``<name>.log`` once the call runs."""
    log = {name: str(tmp / f"{name}.log") for name in ("child", "stubborn", "sdk", "wrapped")}
    python = sys.executable
    return {
        # leaves a child of its own running (as npx leaves node)
        "child": {"command": python,
                  "args": [str(SERVER), "--spawn-child", "--log", log["child"]]},
        # ignores the end of its stdin and SIGTERM
        "stubborn": {"command": python,
                     "args": [str(SERVER), "--ignore-eof", "--log", log["stubborn"]]},
        # the official SDK's own server
        "sdk": {"command": python, "args": [str(SDK_SERVER), "--log", log["sdk"]]},
        # a stubborn one behind a wrapper shell that does not exec it (like uvx)
        "wrapped": {"command": "/bin/sh",
                    "args": ["-c", f"{python} {SERVER} --ignore-eof --log {log['wrapped']}; echo"]},
    }


CALLS = {
    "child": ("mcp__child__slow", {"seconds": 300}, "call slow"),
    "stubborn": ("mcp__stubborn__slow", {"seconds": 300}, "call slow"),
    "sdk": ("mcp__sdk__nap", {"seconds": 300}, "nap started"),
    "wrapped": ("mcp__wrapped__slow", {"seconds": 300}, "call slow"),
}


def _setup(tmp: Path, name: str) -> tuple[Path, str]:
    ws = tmp / "ws"
    ws.mkdir()
    config = {"permissions": {"allow": ["mcp__" + name]},
              "mcpServers": {name: _servers(tmp)[name]}}
    (ws / "toolrun.yaml").write_text(json.dumps(config))
    tool, args, started = CALLS[name]
    (ws / "plan.json").write_text(json.dumps({"calls": [{"tool": tool, "input": args}]}))
    return ws, started


def _logged(log: Path, text: str) -> bool:
    return log.exists() and text in log.read_text()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_kill_9_of_toolrun_during_an_mcp_call_leaves_no_server_running(
    tmp_path: Path, name: str
) -> None:
    ws, started = _setup(tmp_path, name)
    proc = toolrun(ws, "exec", "plan.json", "--format", "jsonl")
    deadline = time.monotonic() + 60
    while not _logged(tmp_path / f"{name}.log", started):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert nothing_left(tmp_path, 0)  # the server runs (the check sees it)
    proc.kill()
    proc.communicate()
    assert not nothing_left(tmp_path), "an MCP server outlived toolrun"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_sighup_during_an_mcp_call_interrupts_it_and_stops_the_server(
    tmp_path: Path, name: str
) -> None:
    ws, started = _setup(tmp_path, name)
    ended = signalled(ws, signal.SIGHUP, lambda: _logged(tmp_path / f"{name}.log", started),
                      "exec", "plan.json", "--format", "jsonl")
    assert ended.code == 129, ended.stderr
    assert ended.statuses() == ["interrupted"]
    assert ended.seconds < BOUND_S + 2 * 2  # (two grace periods for the stubborn one)
    assert not nothing_left(tmp_path)


# ------------------------------------------------- a server that cannot be started

BROKEN = {
    "missing": {"command": "/no/such/server"},
    "exits": {"command": sys.executable, "args": [str(SERVER), "--mode", "exit"]},
    "garbage": {"command": sys.executable, "args": [str(SERVER), "--mode", "garbage"]},
    "not-a-program": {"command": "/etc/hostname"},
}


def _broken(tmp: Path, bad: str, calls: list[dict[str, Any]]) -> Path:
    ws = tmp / "ws"
    ws.mkdir()
    config = {
        "permissions": {"allow": ["Bash", "mcp__good", f"mcp__{bad}"]},
        "mcpServers": {"good": {"command": sys.executable, "args": [str(SERVER)]},
                       bad: BROKEN[bad]},
    }
    (ws / "toolrun.yaml").write_text(json.dumps(config))
    (ws / "plan.json").write_text(json.dumps({"calls": calls}))
    return ws


@pytest.mark.parametrize("bad", sorted(BROKEN))
def test_a_plan_that_never_calls_a_broken_server_runs(tmp_path: Path, bad: str) -> None:
    ws = _broken(tmp_path, bad, [
        {"tool": "Bash", "input": {"command": "echo fine"}},
        {"tool": "mcp__good__echo", "input": {"text": "hello"}},
    ])
    ended = run(ws, "exec", "plan.json", "--format", "jsonl")
    assert ended.code == 0, ended.stderr
    assert ended.statuses() == ["ok", "ok"]
    assert f"MCP server {bad!r} could not be started" in ended.stderr  # said, not fatal
    checked = run(ws, "check", "plan.json", "--format", "jsonl")
    assert checked.code == 0, checked.stderr
    assert [r["decision"] for r in checked.results] == ["allow", "allow"]
    assert not nothing_left(tmp_path)


@pytest.mark.parametrize("bad", sorted(BROKEN))
def test_calls_to_a_broken_server_fail_alone_with_its_reason(tmp_path: Path, bad: str) -> None:
    ws = _broken(tmp_path, bad, [
        {"tool": f"mcp__{bad}__anything", "input": {"x": 1}},
        {"tool": "Bash", "input": {"command": "echo fine"}},
        {"tool": "mcp__good__echo", "input": {"text": "hello"}},
    ])
    ended = run(ws, "exec", "plan.json", "--format", "jsonl")
    assert ended.statuses() == ["error", "ok", "ok"], ended.stderr
    assert f"MCP server {bad!r} could not be started" in ended.results[0]["error"]
    assert ended.code == 1
    checked = run(ws, "check", "plan.json", "--format", "jsonl")
    assert checked.code != 3, checked.stderr  # the plan is checked, not refused
    first, *rest = checked.results
    assert first["status"] == "error"  # it would fail: said, with why
    assert f"MCP server {bad!r} could not be started" in first["error"], first
    assert [(r["decision"], r["status"]) for r in rest] == [("allow", "skipped")] * 2
    assert not nothing_left(tmp_path)
