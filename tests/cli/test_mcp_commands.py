"""MCP servers from the config, end to end, with the real test server (tests/mcp/server.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "server.py"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text(
        "permissions:\n  allow: [mcp__notes__echo, mcp__notes__write_note]\n"
        f"mcpServers:\n  notes: {{command: {sys.executable}, args: [{SERVER}]}}\n"
    )
    return tmp_path


def test_tools_lists_the_servers_tools(runner: CliRunner, ws: Path) -> None:
    result = runner.invoke(main, ["tools", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert rows["mcp__notes__echo"]["source"] == "mcp:notes"
    assert rows["mcp__notes__echo"]["kind"] == "read"
    assert rows["mcp__notes__write_note"]["kind"] == "execute"


def test_exec_calls_mcp_tools_and_validate_checks_their_input(runner: CliRunner, ws: Path) -> None:
    (ws / "plan.yaml").write_text(
        "calls:\n"
        "  - {tool: mcp__notes__echo, input: {text: hello}}\n"
        "  - {tool: mcp__notes__add, input: {a: 1, b: 2}}\n"
    )
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    echo, add = (json.loads(line) for line in result.stdout.splitlines())
    assert (echo["status"], echo["decided_by"]["kind"]) == ("ok", "rule")
    assert "hello" in echo["output"]
    assert (add["status"], add["decision"]) == ("needs_approval", "ask")  # no rule allows it
    assert result.exit_code == 5
    bad = ws / "bad.yaml"
    bad.write_text("calls:\n  - {tool: mcp__notes__echo, input: {}}\n")
    invalid = runner.invoke(main, ["validate", "bad.yaml"])
    assert invalid.exit_code == 3
    assert "bad.yaml:2:30: calls[0].input.text: missing required key 'text'" in invalid.stderr


def test_check_decides_mcp_calls_without_running_them(runner: CliRunner, ws: Path) -> None:
    (ws / "plan.yaml").write_text(
        "calls:\n  - {tool: mcp__notes__write_note, input: {path: n.txt, text: x}}\n"
    )
    result = runner.invoke(main, ["check", "plan.yaml", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    (row,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert row["decision"] == "allow"
    assert not (ws / "n.txt").exists()


def test_a_server_that_cannot_start_fails_only_its_calls(runner: CliRunner, ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(
        "permissions:\n  allow: [LS, mcp__gone]\nmcpServers:\n  gone: {command: /no/such/server}\n"
    )
    (ws / "plan.yaml").write_text(
        "calls:\n  - {tool: LS, input: {path: .}}\n  - {tool: mcp__gone__look, input: {}}\n"
    )
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    ls, gone = (json.loads(line) for line in result.stdout.splitlines())
    assert ls["status"] == "ok"
    assert gone["status"] == "error"
    assert "toolrun.yaml:4:3: MCP server 'gone' could not be started" in gone["error"]
    assert "MCP server 'gone' could not be started" in result.stderr  # a warning too
    assert result.exit_code == 1
