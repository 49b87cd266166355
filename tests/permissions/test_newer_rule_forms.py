"""Claude Code's newer rule forms, end to end: they load, match what they say, and an allow
rule Claude Code skips never approves anything (a warning names its file:line)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.config import load_config
from toolrun.permissions import PermissionEngine


def engine(ws: Path, config: str, mode: str | None = None) -> PermissionEngine:
    (ws / "toolrun.yaml").write_text(config)
    return PermissionEngine(load_config(workspace=ws, env={}, mode=mode))


def test_a_param_deny_matches_that_input_field(tmp_path: Path) -> None:
    eng = engine(
        tmp_path,
        'permissions:\n  allow: ["Bash"]\n  deny: ["Bash(run_in_background:true)"]\n'
        '  ask: ["Bash(timeout: *)"]\n',
    )
    background = eng.decide("Bash", {"command": "ls", "run_in_background": True})
    assert background.decision == "deny"
    assert background.decided_by.rule == "Bash(run_in_background:true)"
    assert eng.decide("Bash", {"command": "ls", "run_in_background": False}).decision == "allow"
    assert eng.decide("Bash", {"command": "ls"}).decision == "allow"  # omitted: never matches
    assert eng.decide("Bash", {"command": "ls", "timeout": 5000}).decision == "ask"


def test_a_param_rule_is_not_a_command_pattern(tmp_path: Path) -> None:
    """Read as a command pattern, the deny would match a command nobody runs."""
    eng = engine(tmp_path, 'permissions:\n  deny: ["Bash(run_in_background:true)"]\n')
    assert eng.decide("Bash", {"command": "run_in_background:true"}).decision != "deny"


@pytest.mark.parametrize(
    ("rule", "value", "decision"),
    [
        ("Agent(model:opus)", "opus", "deny"),
        # not denied: Agent needs no permission in Claude Code (issue 18)
        ("Agent(model:opus)", "claude-opus-4", "allow"),  # exact unless '*'
        ("Agent(model:*opus*)", "claude-opus-4", "deny"),
        ("Agent(model:o[p]us)", "opus", "allow"),  # only '*' is a wildcard
        ("Agent(model:o?us)", "opus", "allow"),
    ],
)
def test_param_values_match_exactly_or_with_star(
    tmp_path: Path, rule: str, value: str, decision: str
) -> None:
    eng = engine(tmp_path, f'permissions:\n  deny: ["{rule}"]\n')
    assert eng.decide("Agent", {"model": value}).decision == decision


def test_an_unanchored_allow_glob_loads_skipped_and_approves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text(
        'permissions:\n  allow:\n    - "mcp__*"\n    - "*"\n    - "mcp__gh__*"\n'
    )
    config = load_config(workspace=tmp_path, env={})
    skipped = (
        "is skipped in allow rules (as Claude Code does): an allow glob counts only "
        "after a literal mcp__<server>__ prefix"
    )
    assert config.warnings == (
        f"toolrun.yaml:3:7: permissions.allow[0]: warning: 'mcp__*': the tool-name glob 'mcp__*' {skipped}",
        f"toolrun.yaml:4:7: permissions.allow[1]: warning: '*': the tool-name glob '*' {skipped}",
    )
    eng = PermissionEngine(config)
    assert eng.decide("mcp__files__delete", {}).decision == "ask"
    assert eng.decide("Bash", {"command": "rm -rf src"}).decision == "ask"
    anchored = eng.decide("mcp__gh__list", {})
    assert (anchored.decision, anchored.decided_by.rule) == ("allow", "mcp__gh__*")


def test_ignored_allow_rules_never_allow_even_in_their_own_words(tmp_path: Path) -> None:
    eng = engine(
        tmp_path,
        'permissions:\n  allow: ["Bash(run_in_background:true)", "Bash(command:rm *)"]\n',
    )
    for command in ("rm -rf src", "run_in_background:true", "command:rm x"):
        decision = eng.decide("Bash", {"command": command, "run_in_background": True})
        assert decision.decision == "ask", command


def test_a_primary_field_in_a_deny_rule_is_a_located_error(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text('permissions:\n  deny:\n    - "Bash(command:rm *)"\n')
    result = runner.invoke(main, ["explain-permission", "Bash", "rm x"])
    assert result.exit_code == 3
    assert result.stderr.startswith("toolrun.yaml:3:7: permissions.deny[0]: ")
    assert "write Bash(rm *)" in result.stderr


def test_the_cli_shows_the_warnings_with_their_location(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text('permissions:\n  allow: ["mcp__*"]\n')
    (tmp_path / "plan.yaml").write_text("calls:\n  - {tool: Bash, input: {command: ls}}\n")
    for args in (
        ["explain-permission", "Bash", "ls"],
        ["exec", "plan.yaml", "--no-journal"],
        ["check", "plan.yaml"],
        ["validate", "plan.yaml"],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, (args, result.output)
        assert result.stderr.count("toolrun.yaml:2:11: permissions.allow[0]: warning: ") == 1, args


@pytest.mark.parametrize("command", ["echo $((", "r${E}m x", "", "eval x"])
@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_a_param_deny_holds_whatever_the_command(tmp_path: Path, command: str, mode: str) -> None:
    """The parameter is in the input whether or not the command can be parsed."""
    eng = engine(tmp_path, 'permissions:\n  deny: ["Bash(run_in_background:true)"]\n', mode=mode)
    decision = eng.decide("Bash", {"command": command, "run_in_background": True})
    assert decision.decision == "deny"


def test_a_param_deny_holds_when_the_path_is_missing(tmp_path: Path) -> None:
    eng = engine(tmp_path, 'permissions:\n  deny: ["Write(content:*BEGIN RSA*)"]\n')
    decision = eng.decide("Write", {"content": "-----BEGIN RSA PRIVATE KEY-----"})
    assert decision.decision == "deny"
