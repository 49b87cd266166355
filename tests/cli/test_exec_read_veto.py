"""toolrun exec: a Read deny rule keeps a file out of Grep, Glob and LS results.

Checking only the search root let `Grep {path: .}` print a denied .env; the executor
now gives tools the engine's read veto, and they leave such files out (and say so).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import toolrun.cli

PLAN = """\
calls:
  - {tool: Grep, input: {pattern: SECRET, path: ., output_mode: content}}
  - {tool: Grep, input: {pattern: SECRET, path: ., glob: "*", output_mode: content}}
  - {tool: Grep, input: {pattern: "=1", glob: ".env", output_mode: count}}
  - {tool: Glob, input: {pattern: "**/*"}}
  - {tool: LS, input: {path: .}}
"""
NOTE = "(1 path hidden by permission rules)"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("SECRET=1\n")
    (tmp_path / "app.py").write_text("import os\nKEY = os.environ['SECRET']\n")
    (tmp_path / "plan.yaml").write_text(PLAN)
    return tmp_path


def run(ws: Path, toolrun_yaml: str) -> tuple[int, list[dict[str, Any]]]:
    (ws / "toolrun.yaml").write_text(toolrun_yaml)
    result = CliRunner().invoke(toolrun.cli.main, ["exec", "plan.yaml", "--format", "jsonl"])
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


def test_a_read_deny_rule_hides_the_file_from_grep_glob_and_ls(ws: Path) -> None:
    code, results = run(ws, 'permissions:\n  deny: ["Read(./.env)"]\n')

    assert code == 0
    assert [r["status"] for r in results] == ["ok"] * 5
    assert [r["decision"] for r in results] == ["allow"] * 5
    outputs = [r["output"] for r in results]
    for output in outputs:
        assert "SECRET=1" not in output
        assert f"{ws}/.env" not in output
    # ripgrep's walk skips dotfiles: .env is not searched, so nothing was hidden.
    assert f"{ws}/app.py:2:KEY = os.environ['SECRET']" in outputs[0]
    assert "hidden by permission rules" not in outputs[0]
    # glob "*" brings dotfiles in: .env is searched, and left out.
    assert f"{ws}/app.py:2:KEY = os.environ['SECRET']" in outputs[1]
    assert outputs[1].endswith(NOTE)
    assert results[1]["metadata"]["hidden"] == 1
    assert outputs[2] == f"No matches found\n{NOTE}"
    assert outputs[3].endswith(NOTE)
    assert outputs[4].splitlines() == [".toolrun/", "app.py", "plan.yaml", "toolrun.yaml", NOTE]
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    assert "SECRET=1" not in journal.read_text()


def test_without_the_rule_the_same_plan_shows_the_file(ws: Path) -> None:
    code, results = run(ws, "permissions: {}\n")

    assert code == 0
    outputs = [r["output"] for r in results]
    assert f"{ws}/.env:1:SECRET=1" in outputs[1]
    assert outputs[2] == f"{ws}/.env:1"
    assert not any("hidden by permission rules" in output for output in outputs)
