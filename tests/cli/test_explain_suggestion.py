"""explain-permission names the narrowest rule that would allow a call that asks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_text_names_the_suggested_rule(runner: CliRunner, ws: Path) -> None:
    result = runner.invoke(main, ["explain-permission", "Bash", "git push origin main"])
    assert result.exit_code == 5
    assert result.stdout.splitlines()[-1] == (
        "suggested rule: Bash(git push origin main) (the narrowest allow rule for this call)"
    )
    edit = runner.invoke(main, ["explain-permission", "Edit", "src/a.py"])
    assert "suggested rule: Edit(./src/a.py)" in edit.stdout


def test_json_carries_the_suggestion(runner: CliRunner, ws: Path) -> None:
    result = runner.invoke(main, ["explain-permission", "--format", "json", "Bash", "touch src/a"])
    assert json.loads(result.stdout)["suggestion"] == {"rules": ["Bash(touch src/a)"], "why": None}
    outside = runner.invoke(main, ["explain-permission", "--format", "json", "Bash", "rm -rf ../x"])
    suggestion = json.loads(outside.stdout)["suggestion"]
    assert suggestion["rules"] == [] and "outside the workspace" in suggestion["why"]


def test_no_suggestion_line_for_an_allow(runner: CliRunner, ws: Path) -> None:
    result = runner.invoke(main, ["explain-permission", "Bash", "ls"])
    assert result.exit_code == 0 and "suggested rule" not in result.stdout
    as_json = runner.invoke(main, ["explain-permission", "--format", "json", "Bash", "ls"])
    assert "suggestion" not in json.loads(as_json.stdout)


def test_a_critical_path_has_no_suggested_rule(runner: CliRunner, ws: Path) -> None:
    result = runner.invoke(main, ["explain-permission", "Bash", "rm -rf ."])
    assert result.exit_code == 5
    last = result.stdout.splitlines()[-1]
    assert last.startswith("suggested rule: none — ") and "critical path" in last


def test_with_hooks_the_suggestion_is_still_printed(runner: CliRunner, ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [{type: command, command: 'true'}]\n"
    )
    result = runner.invoke(main, ["explain-permission", "--hooks", "Bash", "touch src/a"])
    assert result.exit_code == 5
    assert result.stdout.splitlines()[-1].startswith("suggested rule: Bash(touch src/a)")
