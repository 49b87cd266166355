"""bypassPermissions and --ask allow never let a command that cannot be analysed slip past
a deny or ask rule a command could meet ("a deny anywhere wins", issue 9 point 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.config import load_config
from toolrun.hooks import merge_decision
from toolrun.hooks.models import PreToolUseResult
from toolrun.permissions import PermissionEngine

DISGUISED_RM = ["r${E}m x", 'eval "rm x"', "$(echo rm) x", "\\r\\m x"]


def engine(ws: Path, config: str) -> PermissionEngine:
    (ws / "toolrun.yaml").write_text(config)
    return PermissionEngine(load_config(workspace=ws, env={}, mode="bypassPermissions"))


@pytest.mark.parametrize("command", DISGUISED_RM)
def test_bypass_asks_for_what_it_cannot_analyse_when_bash_rules_guard(
    tmp_path: Path, command: str
) -> None:
    guarded = engine(tmp_path, 'permissions:\n  deny: ["Bash(rm *)"]\n')
    decision = guarded.decide("Bash", {"command": command})
    assert decision.decision in ("ask", "deny"), decision.reason
    if decision.decision == "ask":
        assert decision.protected  # only a person may approve it


def test_a_read_deny_guards_too(tmp_path: Path) -> None:
    """A command can read anything (`cat <> .env`), so a Read deny rule counts."""
    guarded = engine(tmp_path, 'permissions:\n  deny: ["Read(./.env)"]\n')
    assert guarded.decide("Bash", {"command": "r${E}m x"}).decision == "ask"


def test_bypass_still_allows_what_it_cannot_analyse_when_no_rule_could_apply(
    tmp_path: Path,
) -> None:
    # an MCP tool's rule is no rule a shell command can run into
    plain = engine(tmp_path, 'permissions:\n  deny: ["mcp__srv__drop"]\n')
    assert plain.decide("Bash", {"command": "r${E}m x"}).decision == "allow"


def test_ask_allow_does_not_run_a_disguised_denied_command(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text('permissions:\n  deny: ["Bash(rm *)"]\n')
    (tmp_path / "x").write_text("keep")
    (tmp_path / "plan.yaml").write_text("calls:\n  - {tool: Bash, input: {command: 'r${E}m x'}}\n")
    for mode in ("default", "bypassPermissions"):
        result = runner.invoke(
            main, ["exec", "plan.yaml", "--format", "jsonl", "--ask", "allow", "--mode", mode]
        )
        (r,) = [json.loads(line) for line in result.stdout.splitlines()]
        assert (r["status"], result.exit_code) == ("needs_approval", 5), mode
        assert (tmp_path / "x").read_text() == "keep"


def test_a_hook_allow_does_not_approve_a_disguised_denied_command(tmp_path: Path) -> None:
    guarded = engine(tmp_path, 'permissions:\n  deny: ["Bash(rm *)"]\n')
    decision = guarded.decide("Bash", {"command": "r${E}m x"})
    final = merge_decision(decision, PreToolUseResult(decision="allow"))
    assert final.decision != "allow"
