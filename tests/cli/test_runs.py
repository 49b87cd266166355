from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: CliRunner) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.yaml").write_text(
        "calls:\n  - {id: hello, tool: Bash, input: {command: 'echo hello; echo 1; echo 2; echo 3'}}\n"
        "  - {tool: Write, input: {file_path: x, content: y}}\n"
    )
    assert runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"]).exit_code == 5
    return tmp_path


def test_runs_lists_journalled_runs(runner: CliRunner, ws: Path) -> None:
    result = runner.invoke(main, ["runs"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["run", "started", "plans", "results", "note"]
    assert "plan.yaml" in lines[2] and "1 needs_approval 1 ok" in lines[2]
    (row,) = json.loads(runner.invoke(main, ["runs", "--format", "json"]).stdout)
    assert row["summary"] == {"ok": 1, "needs_approval": 1}
    assert row["finished"] is True and row["interrupted"] is False


def test_show_a_run_and_one_calls_full_output(runner: CliRunner, ws: Path) -> None:
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    run_id = journal.stem
    table = runner.invoke(main, ["show", run_id[:10]])
    assert table.exit_code == 0
    assert table.stdout.startswith(f"run {run_id}: plan.yaml\n")
    call = runner.invoke(main, ["show", "last", "hello"])
    assert call.exit_code == 0
    assert call.stdout.splitlines()[0] == "hello  Bash  ok"
    assert call.stdout.endswith("\nhello\n1\n2\n3\n")
    denied = runner.invoke(main, ["show", "last", "2"])
    assert "decision:  ask by" in denied.stdout


def test_show_errors(runner: CliRunner, ws: Path) -> None:
    assert runner.invoke(main, ["show", "nope"]).exit_code == 2
    missing = runner.invoke(main, ["show", "last", "nope"])
    assert missing.exit_code == 2
    assert "has no call 'nope'" in missing.stderr


def test_no_runs_yet(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["runs", "--workspace", str(tmp_path)])
    assert result.stdout == "no runs recorded yet\n"
    shown = runner.invoke(main, ["show", "last", "--workspace", str(tmp_path)])
    assert shown.exit_code == 2 and "no runs recorded" in shown.stderr
