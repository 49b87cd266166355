"""The hooks' merged PreToolUse verdict combined with the permission rules (pure)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolrun.config.models import Config, PermissionRule, SettingSource, SourceKind
from toolrun.hooks import HookRef, PreToolUseResult, hook_allow_applies, merge_decision
from toolrun.permissions import Decision, PermissionEngine

RULES = (
    ("allow", "Bash(npm test)"),
    ("ask", "Bash(git push *)"),
    ("deny", "Bash(rm -rf build)"),
)
HOOK = HookRef("./hooks/guard.py", "/ws/toolrun.yaml:12")


def decide(ws: Path, tool: str, tool_input: dict[str, Any], mode: str = "default") -> Decision:
    source = SettingSource(SourceKind.TOOLRUN, ws / "toolrun.yaml", 3, ws)
    config = Config(
        workspace=ws,
        default_mode=mode,  # type: ignore[arg-type]
        rules=tuple(PermissionRule(b, t, source) for b, t in RULES),  # type: ignore[arg-type]
    )
    return PermissionEngine(config).decide(tool, tool_input)


def hooks_said(decision: str | None, reason: str | None = "because") -> PreToolUseResult:
    return PreToolUseResult(
        decision=decision,  # type: ignore[arg-type]
        reason=reason,
        decided_by=HOOK if decision is not None else None,
    )


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return "Bash", {"command": command}


ALLOWED = bash("npm test")  # allow rule
ASK_RULE = bash("git push origin")  # ask rule
DENIED = bash("rm -rf build")  # deny rule
UNDECIDED = bash("make")  # no rule: asks (kind default)
MIXED = bash("make && git push origin")  # overall kind default, but an ask rule inside
PROTECTED = ("Edit", {"file_path": ".git/config", "old_string": "a", "new_string": "b"})
CRITICAL = bash("rm -rf ~")
OUTSIDE = ("Read", {"file_path": "/etc/hosts"})


@pytest.mark.parametrize(
    ("call", "mode", "hook", "expected", "kind"),
    [
        # no hook decision, or defer: the rules decide
        (ALLOWED, "default", None, "allow", "rule"),
        (UNDECIDED, "default", None, "ask", "default"),
        (UNDECIDED, "default", "defer", "ask", "default"),
        (DENIED, "default", "defer", "deny", "rule"),
        # a hook deny always denies, even over an allow rule
        (ALLOWED, "default", "deny", "deny", "hook"),
        (UNDECIDED, "bypassPermissions", "deny", "deny", "hook"),
        (DENIED, "default", "deny", "deny", "hook"),
        # a hook ask: allow -> ask, deny stays deny, dontAsk turns it into deny
        (ALLOWED, "default", "ask", "ask", "hook"),
        (bash("ls"), "default", "ask", "ask", "hook"),
        (DENIED, "default", "ask", "deny", "rule"),
        (UNDECIDED, "default", "ask", "ask", "default"),
        (ALLOWED, "dontAsk", "ask", "deny", "hook"),
        # a hook allow skips a prompt...
        (UNDECIDED, "default", "allow", "allow", "hook"),
        (UNDECIDED, "dontAsk", "allow", "allow", "hook"),
        (ALLOWED, "default", "allow", "allow", "rule"),
        # ...but never overrides a deny, an ask rule or a protected/critical path
        (DENIED, "default", "allow", "deny", "rule"),
        (ASK_RULE, "default", "allow", "ask", "rule"),
        (ASK_RULE, "bypassPermissions", "allow", "ask", "rule"),
        (ASK_RULE, "dontAsk", "allow", "deny", "rule"),
        (MIXED, "default", "allow", "ask", "default"),
        (MIXED, "dontAsk", "allow", "deny", "mode"),
        (PROTECTED, "default", "allow", "ask", "protected"),
        (PROTECTED, "dontAsk", "allow", "deny", "protected"),
        (CRITICAL, "bypassPermissions", "allow", "ask", "protected"),
        # ...nor a path outside the workspace (toolrun is stricter than Claude Code here)
        (OUTSIDE, "default", "allow", "ask", "boundary"),
        (UNDECIDED, "plan", "allow", "deny", "mode"),
    ],
)
def test_merge_table(
    tmp_path: Path,
    call: tuple[str, dict[str, Any]],
    mode: str,
    hook: str | None,
    expected: str,
    kind: str,
) -> None:
    engine = decide(tmp_path, *call, mode=mode)
    final = merge_decision(engine, hooks_said(hook))
    assert (final.decision, final.decided_by.kind) == (expected, kind)
    if kind == "hook":
        assert final.decided_by.rule == HOOK.command
        assert final.decided_by.source == HOOK.source
    else:
        assert final.decided_by.rule == engine.decided_by.rule
        assert final.decided_by.source == engine.decided_by.source


def test_no_hooks_at_all_is_the_engine_decision(tmp_path: Path) -> None:
    engine = decide(tmp_path, *ALLOWED)
    final = merge_decision(engine, None)
    assert (final.decision, final.reason) == ("allow", engine.reason)
    assert final.decided_by.to_json() == engine.decided_by.to_json()
    assert final.notes == ()


def test_hook_deny_reason_names_the_hook(tmp_path: Path) -> None:
    final = merge_decision(decide(tmp_path, *ALLOWED), hooks_said("deny", "no pushing on Fridays"))
    assert final.reason == (
        "denied by PreToolUse hook `./hooks/guard.py` (/ws/toolrun.yaml:12): "
        "no pushing on Fridays"
    )
    assert json.loads(json.dumps(final.to_json()))["decided_by"] == {
        "kind": "hook",
        "rule": "./hooks/guard.py",
        "source": "/ws/toolrun.yaml:12",
    }


def test_refused_allow_is_explained(tmp_path: Path) -> None:
    final = merge_decision(decide(tmp_path, *ASK_RULE), hooks_said("allow"))
    assert final.decision == "ask"
    assert any("never overrides" in note for note in final.notes)


def test_hook_allow_over_a_prompt_keeps_what_it_overrode(tmp_path: Path) -> None:
    final = merge_decision(decide(tmp_path, *UNDECIDED), hooks_said("allow", None))
    assert final.reason == "allowed by PreToolUse hook `./hooks/guard.py` (/ws/toolrun.yaml:12)"
    assert final.notes and final.notes[0].startswith("without the hook: ask")


def test_hook_allow_applies(tmp_path: Path) -> None:
    assert hook_allow_applies(decide(tmp_path, *UNDECIDED))
    assert not hook_allow_applies(decide(tmp_path, *MIXED))
    assert not hook_allow_applies(decide(tmp_path, *DENIED))
