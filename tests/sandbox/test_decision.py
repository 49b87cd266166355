"""autoAllowBashIfSandboxed and allowUnsandboxedCommands in the permission decision."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sandbox.conftest import needs_bwrap, write
from toolrun.config.loader import load_config
from toolrun.permissions import PermissionEngine
from toolrun.permissions.decision import Decision

pytestmark = needs_bwrap

AUTO = (
    "permissions:\n  ask: ['Bash(git push *)']\n  deny: ['Bash(curl *)']\n"
    "sandbox:\n  enabled: true\n  autoAllowBashIfSandboxed: true\n"
    "  excludedCommands: ['docker *']\n"
)


def decide(
    ws: Path, config: str, command: str, *, mode: str | None = None, **extra: object
) -> Decision:
    write(ws / "toolrun.yaml", config)
    engine = PermissionEngine(load_config(workspace=ws))
    return engine.decide("Bash", {"command": command, **extra}, mode=mode)


@pytest.mark.parametrize("command", ["make build", "npm test", "echo x > ../out", "cat /etc/x"])
def test_a_sandboxed_call_that_would_ask_is_allowed_by_the_sandbox(ws: Path, command: str) -> None:
    decision = decide(ws, AUTO, command)
    assert decision.decision == "allow"
    assert decision.decided_by.kind == "sandbox"
    assert decision.decided_by.rule == "sandbox.autoAllowBashIfSandboxed"
    assert decision.sandbox == "runs sandboxed (bubblewrap)"


def test_dont_ask_mode_does_not_turn_it_into_deny(ws: Path) -> None:
    assert decide(ws, AUTO, "make", mode="dontAsk").decision == "allow"


@pytest.mark.parametrize(
    ("command", "extra", "expected"),
    [
        ("git push origin main", {}, "ask"),  # an explicit ask rule
        ("curl https://x.example", {}, "deny"),  # a deny rule
        ("rm -rf ~", {}, "ask"),  # a critical path
        ("echo x > .git/hooks/pre-commit", {}, "ask"),  # a protected path
        ('eval "$X"', {}, "ask"),  # cannot be analysed
        ("docker ps", {}, "ask"),  # excludedCommands: runs outside
        ("make", {"dangerouslyDisableSandbox": True}, "ask"),  # asks to run outside
    ],
)
def test_what_the_sandbox_never_allows(
    ws: Path, command: str, extra: dict[str, object], expected: str
) -> None:
    decision = decide(ws, AUTO, command, **extra)
    assert decision.decision == expected
    assert decision.decided_by.kind != "sandbox"


def test_plan_mode_is_not_overridden(ws: Path) -> None:
    assert decide(ws, AUTO, "make", mode="plan").decision == "deny"


def test_without_auto_allow_a_sandboxed_call_still_asks(ws: Path) -> None:
    config = "sandbox:\n  enabled: true\n"
    decision = decide(ws, config, "make")
    assert decision.decision == "ask"
    assert "[sandbox: runs sandboxed (bubblewrap)]" in decision.reason


def test_unavailable_sandbox_never_auto_allows(ws: Path) -> None:
    config = AUTO + "  bwrapPath: /nonexistent/bwrap\n"
    decision = decide(ws, config, "make")
    assert decision.decision == "ask"
    assert decision.sandbox is not None and decision.sandbox.startswith("runs unsandboxed")


@pytest.mark.parametrize(
    ("command", "extra"),
    [("docker ps", {}), ("ls", {"dangerouslyDisableSandbox": True})],
)
def test_allow_unsandboxed_false_denies_calls_that_would_leave(
    ws: Path, command: str, extra: dict[str, object]
) -> None:
    config = AUTO + "  allowUnsandboxedCommands: false\n"
    config = config.replace("permissions:\n", "permissions:\n  allow: ['Bash(docker *)']\n")
    decision = decide(ws, config, command, **extra)
    assert decision.decision == "deny"
    assert decision.decided_by.kind == "sandbox"
    assert "allowUnsandboxedCommands is false" in decision.reason


def test_a_disabled_sandbox_changes_nothing(ws: Path) -> None:
    config = "sandbox:\n  enabled: false\n  autoAllowBashIfSandboxed: true\n"
    decision = decide(ws, config, "make")
    assert decision.decision == "ask"
    assert decision.sandbox is None


def test_explain_permission_says_where_the_call_runs(ws: Path) -> None:
    from click.testing import CliRunner

    from toolrun.cli import main

    write(ws / "toolrun.yaml", AUTO)
    result = CliRunner().invoke(
        main, ["explain-permission", "--workspace", str(ws), "Bash", "docker ps"]
    )
    assert (
        "sandbox:    runs unsandboxed: sandbox.excludedCommands matches (docker *)" in result.output
    )
    result = CliRunner().invoke(
        main, ["explain-permission", "--workspace", str(ws), "--format", "json", "Bash", "make"]
    )
    assert '"sandbox": "runs sandboxed (bubblewrap)"' in result.output


def test_check_says_where_the_call_runs(ws: Path) -> None:
    from click.testing import CliRunner

    from toolrun.cli import main

    write(ws / "toolrun.yaml", AUTO)
    plan = write(ws / "plan.yaml", "calls:\n  - {tool: Bash, input: {command: make}}\n")
    result = CliRunner().invoke(
        main, ["check", "--workspace", str(ws), "--format", "json", str(plan)]
    )
    assert "runs sandboxed (bubblewrap)" in result.output
    assert '"kind": "sandbox"' in result.output


@pytest.mark.parametrize(
    "command",
    [
        "docker ps; echo x > ../out",  # one part is not excluded
        "docker run $(cat ~/.ssh/id_rsa)",  # nor is the command inside $(...)
        "eval docker ps",  # cannot be analysed
        "dockerd",  # another command
    ],
)
def test_excluded_only_when_every_part_is(ws: Path, command: str) -> None:
    assert decide(ws, AUTO, command).sandbox == "runs sandboxed (bubblewrap)"


@pytest.mark.parametrize("value", ["yes", 1, "true", "false"])
def test_any_value_but_false_asks_to_leave(ws: Path, value: object) -> None:
    # The plan's schema takes only true or false; the decision never reads more into it.
    decision = decide(ws, AUTO, "make", dangerouslyDisableSandbox=value)
    assert decision.decision == "ask"
    assert decision.sandbox == "runs unsandboxed: dangerouslyDisableSandbox is set"


def test_the_plan_schema_takes_only_a_boolean() -> None:
    from pydantic import ValidationError

    from toolrun.tools.builtins.bash import BashInput

    with pytest.raises(ValidationError):
        BashInput.model_validate({"command": "make", "dangerouslyDisableSandbox": "yes"})
