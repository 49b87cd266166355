"""A project's Claude Code settings are honoured by default, and every command says what it
read (issue 26, point 1): a gate must never pass what it never checked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.config import SourceKind, load_config

SETTINGS = {"permissions": {"deny": ["Read(./.env)"], "ask": ["Bash(git push *)"]}}
PLAN = (
    "calls:\n"
    "  - {tool: Bash, input: {command: 'cat .env | base64'}}\n"
    "  - {tool: Bash, input: {command: 'git push origin main'}}\n"
)


UNLOADED = (
    "warning: ~/.claude/settings.json (Claude Code user settings) was not loaded: its "
    "rules and hooks are not checked; user settings load only with "
    "toolrun.loadClaudeSettings: true, so that CI runs stay reproducible"
)

def project(root: Path, name: str = "settings.json", settings: object = SETTINGS) -> Path:
    """A project with only Claude Code's settings (no toolrun.yaml) and a plan."""
    (root / ".claude").mkdir(parents=True, exist_ok=True)
    (root / ".claude" / name).write_text(json.dumps(settings, indent=2) + "\n")
    (root / ".env").write_text("TOKEN=secret\n")
    (root / "plan.yaml").write_text(PLAN)
    return root


def toolrun(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolrun", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_check_denies_and_asks_by_the_projects_settings_in_a_real_process(
    tmp_path: Path,
) -> None:
    project(tmp_path)
    done = toolrun(tmp_path, "check", "plan.yaml")
    assert done.returncode == 4, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("plan.yaml:2:5: deny  call-1 Bash(cat .env | base64)")
    assert "deny rule Read(./.env) (.claude/settings.json:4)" in lines[1]
    assert lines[2].startswith("plan.yaml:3:5: ask   call-2 Bash(git push origin main)")
    assert "ask rule Bash(git push *) (.claude/settings.json:7)" in lines[2]
    assert "sources: .claude/settings.json\n" in done.stderr
    # the ask is what a CI job sees with --fail-on ask: both fail
    assert toolrun(tmp_path, "check", "plan.yaml", "--fail-on", "ask").returncode == 4
    data = json.loads(toolrun(tmp_path, "check", "plan.yaml", "--format", "json").stdout)
    assert data["sources"] == [".claude/settings.json"]
    assert [r["decision"] for r in data["results"]] == ["deny", "ask"]
    assert data["summary"]["exit_code"] == 4


@pytest.mark.parametrize(
    ("names", "sources"),
    [
        (("settings.json",), ".claude/settings.json"),
        (("settings.local.json",), ".claude/settings.local.json"),
        (("settings.local.json", "settings.json"), ".claude/settings.local.json, .claude/settings.json"),
    ],
)
def test_check_with_the_cli_runner_reads_local_and_project_settings(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: tuple[str, ...],
    sources: str,
) -> None:
    for name in names:
        project(tmp_path, name)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["check", "plan.yaml"])
    assert result.exit_code == 4, result.output
    assert f"sources: {sources}\n" in result.stderr
    assert result.stdout.count("deny rule Read(./.env)") == 1


def test_a_workspace_elsewhere_reads_its_own_settings(runner: CliRunner, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    ws = project(tmp_path / "ws")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["check", "ws/plan.yaml", "--workspace", "ws"])
    assert result.exit_code == 4
    assert "sources: ws/.claude/settings.json\n" in result.stderr
    assert (ws / ".env").is_file()


def test_every_deciding_command_names_its_sources(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project(tmp_path)
    (tmp_path / "toolrun.yaml").write_text("permissions: {allow: ['Bash(echo *)']}\n")
    monkeypatch.chdir(tmp_path)
    both = "toolrun.yaml, .claude/settings.json"
    dry = runner.invoke(main, ["exec", "--dry-run", "plan.yaml"])
    assert dry.exit_code == 4 and f"sources: {both}\n" in dry.stderr
    dry_json = runner.invoke(main, ["exec", "--dry-run", "plan.yaml", "--format", "json"])
    assert json.loads(dry_json.stdout)["sources"] == ["toolrun.yaml", ".claude/settings.json"]
    explained = runner.invoke(main, ["explain-permission", "Bash", "cat .env"])
    assert explained.exit_code == 4
    assert f"sources:    {both}\n" in explained.stdout
    as_json = runner.invoke(main, ["explain-permission", "Bash", "cat .env", "--format", "json"])
    assert json.loads(as_json.stdout)["sources"] == ["toolrun.yaml", ".claude/settings.json"]
    valid = runner.invoke(main, ["validate", "plan.yaml"])
    assert valid.stdout == f"plan.yaml: ok (1 turn, 2 calls)\nsources: {both}\n"
    valid_json = runner.invoke(main, ["validate", "plan.yaml", "--format", "json"])
    assert json.loads(valid_json.stdout)["sources"] == ["toolrun.yaml", ".claude/settings.json"]


def test_a_run_with_no_settings_says_so_instead_of_no_rules_configured(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["explain-permission", "Bash", "ls"])
    assert "sources:    none (built-in defaults)\n" in result.stdout
    assert "  (none: no settings file was loaded)\n" in result.stdout
    (tmp_path / "toolrun.yaml").write_text("toolrun: {maxConcurrency: 2}\n")
    result = runner.invoke(main, ["explain-permission", "Bash", "ls"])
    assert "  (none: no permission rule in toolrun.yaml)\n" in result.stdout
    assert "no rules configured" not in result.stdout
    (tmp_path / "plan.yaml").write_text("calls: [{tool: Bash, input: {command: ls}}]\n")
    checked = runner.invoke(main, ["check", "plan.yaml"])
    assert "sources: toolrun.yaml\n" in checked.stderr


def test_user_settings_load_only_with_the_flag_and_are_named_when_not(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _isolated_home: Path
) -> None:
    user = _isolated_home / ".claude" / "settings.json"
    user.parent.mkdir()
    user.write_text('{"permissions": {"deny": ["Bash(git push *)"]}}\n')
    project(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["check", "plan.yaml", "--format", "json"])
    data = json.loads(result.stdout)
    assert data["sources"] == [".claude/settings.json"]
    assert data["config_warnings"] == [UNLOADED]
    assert "~/.claude/settings.json (Claude Code user settings) was not loaded" in result.stderr
    assert [r["decision"] for r in data["results"]] == ["deny", "ask"]
    (tmp_path / "toolrun.yaml").write_text("toolrun: {loadClaudeSettings: true}\n")
    data = json.loads(runner.invoke(main, ["check", "plan.yaml", "--format", "json"]).stdout)
    assert data["sources"] == ["toolrun.yaml", ".claude/settings.json", str(user)]
    assert data["config_warnings"] == []
    assert [r["decision"] for r in data["results"]] == ["deny", "deny"]  # the user's deny


def test_precedence_managed_then_toolrun_yaml_then_local_then_project(tmp_path: Path) -> None:
    """Scalars from the highest source; rule lists merge (a deny anywhere wins)."""
    project(tmp_path, "settings.json", {"permissions": {"defaultMode": "dontAsk"}})
    project(tmp_path, "settings.local.json", {"permissions": {"defaultMode": "plan"}})
    assert load_config(workspace=tmp_path, env={}).default_mode == "plan"
    (tmp_path / "toolrun.yaml").write_text("permissions: {defaultMode: acceptEdits}\n")
    config = load_config(workspace=tmp_path, env={})
    assert config.default_mode == "acceptEdits"
    assert [s.kind for s in (config.mode_source,) if s] == [SourceKind.TOOLRUN]
    managed = tmp_path / "managed.json"
    managed.write_text('{"permissions": {"defaultMode": "default"}}')
    assert load_config(workspace=tmp_path, env={}, managed_settings=managed).default_mode == (
        "default"
    )


def test_a_settings_file_given_as_the_config_is_read_once(tmp_path: Path) -> None:
    settings = project(tmp_path) / ".claude" / "settings.json"
    config = load_config(workspace=tmp_path, env={}, config_file=settings)
    assert len(config.rules) == 2 and config.files == (settings,)
