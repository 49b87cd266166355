"""`runs --limit`, `runs prune --keep | --older-than` and `validate --format json`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.commands.runs import list_runs


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: CliRunner) -> Path:
    """Four finished runs, started a day apart (oldest first): run-0 .. run-3."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.yaml").write_text("calls:\n  - {tool: Bash, input: {command: 'echo hi'}}\n")
    for _ in range(4):
        assert runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"]).exit_code == 0
    journals = sorted((tmp_path / ".toolrun" / "runs").glob("*.jsonl"), key=os.path.getmtime)
    now = journals[-1].stat().st_mtime
    for age, path in zip((3, 2, 1, 0), journals, strict=True):
        lines = path.read_text().splitlines()
        first = json.loads(lines[0])
        first["started_at"] = now - age * 86400 - 60
        path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    return tmp_path


def run_ids(ws: Path) -> list[str]:
    return [r.run_id for r in list_runs(ws)]


def test_runs_limit_lists_the_newest(runner: CliRunner, ws: Path) -> None:
    newest = run_ids(ws)
    listed = json.loads(runner.invoke(main, ["runs", "--limit", "2", "--format", "json"]).stdout)
    assert [r["run_id"] for r in listed] == newest[:2]
    assert runner.invoke(main, ["runs", "--limit", "0"]).exit_code == 2


def test_prune_keep_deletes_all_but_the_newest(runner: CliRunner, ws: Path) -> None:
    before = run_ids(ws)
    dry = runner.invoke(main, ["runs", "prune", "--keep", "1", "--dry-run"])
    assert dry.exit_code == 0 and run_ids(ws) == before
    assert dry.stdout.splitlines()[:3] == [f"would delete {r}" for r in before[1:]]
    done = runner.invoke(main, ["runs", "prune", "--keep", "1"])
    assert done.exit_code == 0, done.output
    assert run_ids(ws) == before[:1]


def test_prune_older_than_days(runner: CliRunner, ws: Path) -> None:
    before = run_ids(ws)
    assert runner.invoke(main, ["runs", "prune", "--older-than", "1.5"]).exit_code == 0
    assert run_ids(ws) == before[:2]  # started 0 and 1 day ago


def test_prune_deletes_a_run_without_an_end_record_whose_process_is_gone(
    runner: CliRunner, ws: Path
) -> None:
    # (one still running is kept: tests/faults/test_a_crashed_runs.py, with a real process)
    oldest = ws / ".toolrun" / "runs" / f"{run_ids(ws)[-1]}.jsonl"
    lines = oldest.read_text().splitlines()
    oldest.write_text("\n".join(line for line in lines if '"event": "end"' not in line) + "\n")
    done = runner.invoke(main, ["runs", "prune", "--keep", "0"])
    assert run_ids(ws) == [] and "still running" not in done.stderr


@pytest.mark.parametrize("args", [[], ["--keep", "1", "--older-than", "2"], ["--keep", "-1"]])
def test_prune_needs_exactly_one_rule(runner: CliRunner, ws: Path, args: list[str]) -> None:
    before = run_ids(ws)
    assert runner.invoke(main, ["runs", "prune", *args]).exit_code == 2
    assert run_ids(ws) == before


def test_validate_json(runner: CliRunner, ws: Path) -> None:
    (ws / "bad.yaml").write_text("calls:\n  - {tool: Nope}\n")
    done = runner.invoke(main, ["validate", "plan.yaml", "bad.yaml", "--format", "json"])
    assert done.exit_code == 3
    report = json.loads(done.stdout)
    assert report["files"] == [
        {"file": "plan.yaml", "valid": True, "turns": 1, "calls": 1},
        {"file": "bad.yaml", "valid": False, "turns": None, "calls": None},
    ]
    assert report["problems"][0] | {"text": ""} == {
        "file": "bad.yaml", "line": 2, "column": 6, "path": "calls[0].tool",
        "message": "unknown tool 'Nope'", "text": "",
    }
    assert (report["valid"], report["exit_code"]) == (False, 3)
    ok = json.loads(runner.invoke(main, ["validate", "plan.yaml", "--format", "json"]).stdout)
    assert ok["valid"] is True and ok["problems"] == []
