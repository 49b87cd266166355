"""``--problems`` (#29): exec and check show only what is denied, asks or fails — text,
table, at a terminal and piped — and the recap still counts every call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.render.screen import at_terminal, table_rows
from toolrun.cli import main

RULES = """\
permissions:
  allow: ["Bash(echo *)", "Bash(false*)", "Bash(sleep *)", Read]
  ask: ["Bash(git push *)"]
  deny: ["Bash(curl *)"]
"""
PLAN = """\
calls:
  - {id: readme, tool: Read, input: {file_path: README.md}}
  - {id: fine, tool: Bash, input: {command: "echo fine"}}
  - {id: broken, tool: Bash, input: {command: "false"}}
  - {id: fetch, tool: Bash, input: {command: "curl https://example.com"}}
  - {id: push, tool: Bash, input: {command: "git push origin main"}}
  - {id: slow, tool: Bash, input: {command: "sleep 5", timeout: 300}}
"""
QUIET = "calls:\n  - {id: calm, tool: Bash, input: {command: 'echo calm'}}\n"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text(RULES)
    (tmp_path / "plan.yaml").write_text(PLAN)
    (tmp_path / "calm.yaml").write_text(QUIET)
    (tmp_path / "README.md").write_text("hello\n")
    return tmp_path


def ids(lines: list[str], column: int) -> list[str]:
    return [line.split()[column] for line in lines]


def test_exec_text_shows_the_failed_the_denied_and_the_asks(runner: CliRunner, ws: Path) -> None:
    done = runner.invoke(main, ["exec", "plan.yaml", "--format", "text", "--problems"])
    *rows, recap = done.stdout.splitlines()
    # error (exit 1), denied, an unanswered ask, a timeout: every kind of not-done
    assert ids(rows, 1) == ["broken", "fetch", "push", "slow"], done.stdout
    assert [r.split()[0] for r in rows] == ["error", "denied", "needs_approval", "timeout"]
    assert recap.startswith("2 ok · 1 failed · 1 timed out · 1 denied · 1 need approval in")
    assert done.exit_code == 4
    whole = runner.invoke(main, ["exec", "plan.yaml", "--format", "text"])
    assert ids(whole.stdout.splitlines()[:-1], 1) == ["readme", "fine", "broken", "fetch", "push", "slow"]


def test_exec_table_and_dry_run_show_the_would_asks_too(runner: CliRunner, ws: Path) -> None:
    done = runner.invoke(main, ["exec", "plan.yaml", "--dry-run", "--format", "table", "--problems"])
    lines = done.stdout.splitlines()
    assert [line.split()[1] for line in lines[2:-1]] == ["fetch", "push"], done.stdout
    assert lines[-1].startswith("1 denied · 5 skipped in "), lines[-1]


def test_exec_machine_formats_stay_whole(runner: CliRunner, ws: Path) -> None:
    done = runner.invoke(main, ["exec", "plan.yaml", "--format", "json", "--problems"])
    assert len(json.loads(done.stdout)["results"]) == 6


def test_exec_problems_at_a_terminal(ws: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp("home")
    out, code = at_terminal(ws, 120, "exec", "plan.yaml", "--ask", "deny", "--problems", home=home)
    assert code == 4
    lines = out.splitlines()
    table = lines[: next(i for i, line in enumerate(lines) if " · " in line and "in " in line)]
    rows = table_rows(table)
    assert [r["id"] for r in rows] == ["broken", "fetch", "push", "slow"], out
    assert "2 ok · 1 failed" in out  # the recap counts every call


def test_check_shows_only_the_denies_and_asks(runner: CliRunner, ws: Path) -> None:
    for fmt in ("text", "table"):
        done = runner.invoke(main, ["check", "plan.yaml", "calm.yaml", "--format", fmt, "--problems"])
        out = done.stdout.splitlines()
        assert not any("calm" in line for line in out), done.stdout  # an input with none: not shown
        shown = [line for line in out if " fetch " in f" {line} " or " push " in f" {line} "]
        assert len(shown) == 2, done.stdout
        assert not any(" fine " in f" {line} " or " readme " in f" {line} " for line in out)
        assert out[-1].startswith("2 inputs, 7 calls: 5 allow · 1 ask · 1 deny"), out[-1]
        assert done.exit_code == 4


def test_check_problems_at_a_terminal(ws: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp("home")
    out, code = at_terminal(ws, 200, "check", "plan.yaml", "calm.yaml", "--problems", home=home)
    assert code == 4
    lines = out.splitlines()
    assert lines[0].startswith("plan.yaml (toolrun)") and "calm.yaml" not in out
    rows = table_rows(lines[1 : lines.index("")])
    assert [(r["decision"], r["id"]) for r in rows] == [("deny", "fetch"), ("ask", "push")]
    assert "2 inputs, 7 calls: 5 allow · 1 ask · 1 deny" in out
