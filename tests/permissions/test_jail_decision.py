"""Which Bash calls the engine sends to a jail (#25): an allow on toolrun's own judgement
runs where that judgement is true; what a rule, a hook, a person or bypassPermissions
allowed runs as the user configured it.

Rows name where they come from: "issue 25" (the issue's own examples), "design §4" (the
modes' table), "Claude Code docs" (its permission modes and hooks), "by hand".
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from toolrun.config.models import Config
from toolrun.config.sandbox import SandboxSettings
from toolrun.errors import Location
from toolrun.execution.decide import EngineDecider
from toolrun.hooks.models import HookRef, PreToolUseResult
from toolrun.permissions import Decision, PermissionEngine
from toolrun.permissions.enforce import SHELL_BUILTINS
from toolrun.plan.models import Call

from .conftest import Tree, make_config

NPM = ["Bash(npm test)"]

# (source, mode, command, allow rules, decision, jail, where it runs)
ROWS: list[tuple[str, str, str, list[str], str, str | None, str]] = [
    # -- the read-only set, judged by toolrun: a read-only jail
    ("design §4", "default", "ls", [], "allow", "read-only", "read-only jail"),
    ("design §4", "default", "cat src/a.py", [], "allow", "read-only", "read-only jail"),
    ("design §4", "default", "git status", [], "allow", "read-only", "read-only jail"),
    ("design §4", "default", "grep -rn TODO src", [], "allow", "read-only", "read-only jail"),
    ("by hand", "default", "cd src && cat a.py", [], "allow", "read-only", "read-only jail"),
    ("by hand", "default", "ls | head -3", [], "allow", "read-only", "read-only jail"),
    ("by hand", "default", "echo hi > /dev/null", [], "allow", "read-only", "read-only jail"),
    ("design §4", "plan", "cat src/a.py", [], "allow", "read-only", "read-only jail"),
    ("design §4", "dontAsk", "ls", [], "allow", "read-only", "read-only jail"),
    ("design §4", "acceptEdits", "ls -la", [], "allow", "read-only", "read-only jail"),
    # -- acceptEdits' workspace file commands: a workspace jail
    ("issue 25", "acceptEdits", "mkdir build", [], "allow", "workspace", "workspace jail"),
    ("issue 25", "acceptEdits", "touch src/new.py", [], "allow", "workspace", "workspace jail"),
    ("by hand", "acceptEdits", "cp src/a.py src/b.py", [], "allow", "workspace",
     "workspace jail"),
    ("by hand", "acceptEdits", "mkdir build && ls", [], "allow", "workspace", "workspace jail"),
    ("by hand", "acceptEdits", "cat src/a.py > out.txt", [], "allow", "workspace",
     "workspace jail"),
    # -- allowed by the user's own rule: runs as configured
    ("Claude Code docs", "default", "ls", ["Bash(ls)"], "allow", None, "unsandboxed"),
    ("Claude Code docs", "default", "npm test", NPM, "allow", None, "unsandboxed"),
    ("by hand", "acceptEdits", "mkdir build", ["Bash(mkdir *)"], "allow", None, "unsandboxed"),
    # -- mixed: a rule allowed a part, toolrun judged another: the rule's part must run
    # as configured (a read-only jail would break `npm test`), so no jail holds the call
    ("issue 25", "default", "cat src/a.py && npm test", NPM, "allow", None, "unsandboxed"),
    ("by hand", "default", "npm test 2>&1 | tail -5", NPM, "allow", None, "unsandboxed"),
    ("by hand", "acceptEdits", "npm test > out.txt", NPM, "allow", None, "unsandboxed"),
    # (shell builtins next to a rule's part: nothing was judged that a jail would keep)
    ("by hand", "default", "cd src && npm test", NPM, "allow", None, "unsandboxed"),
    # -- bypassPermissions: what the mode allows is the user's choice, but the rules' masks
    # hold (issue 25, point 3); what a rule allowed runs as configured, as in every mode
    ("issue 25", "bypassPermissions", "cat src/a.py", [], "allow", "masks", "masks-only jail"),
    ("issue 25", "bypassPermissions", "mkdir build", [], "allow", "masks", "masks-only jail"),
    ("issue 25", "bypassPermissions", "npm test", [], "allow", "masks", "masks-only jail"),
    ("by hand", "bypassPermissions", "npm test", NPM, "allow", None, "unsandboxed"),
    # -- asks and denials are never jailed (an approved ask runs as configured)
    ("design §4", "default", "rm -rf build", [], "ask", None, "unsandboxed"),
    ("design §4", "default", "cat ../../other/secret.txt", [], "ask", None, "unsandboxed"),
    ("design §4", "plan", "mkdir build", [], "deny", None, ""),
    ("design §4", "dontAsk", "npm test", [], "deny", None, ""),
]


def _engine(tree: Tree, *, allow: list[str] | None = None, mode: str = "default",
            deny: list[str] | None = None, enforce: str = "auto",
            unavailable: str | None = None, **sandbox: Any) -> PermissionEngine:
    config: Config = make_config(tree.ws, allow=allow or (), deny=deny or (), mode=mode,
                                 additional=(tree.shared,))
    config = replace(config, toolrun=replace(config.toolrun, enforce=enforce))  # type: ignore[arg-type]
    if sandbox:
        config = replace(config, sandbox=SandboxSettings(enabled=True, **sandbox))
    engine = PermissionEngine(config, memo=False)
    engine.jail_unavailable = lambda: unavailable  # (the machine's bwrap is not the subject)
    return engine


def _bash(engine: PermissionEngine, command: str) -> Decision:
    return engine.decide("Bash", {"command": command})


@pytest.mark.parametrize(
    ("source", "mode", "command", "allow", "decision", "jail", "place"),
    ROWS,
    ids=[f"{r[1]}: {r[2]}" for r in ROWS],
)
def test_which_calls_get_which_jail(
    tree: Tree, source: str, mode: str, command: str, allow: list[str], decision: str,
    jail: str | None, place: str,
) -> None:
    got = _bash(_engine(tree, allow=allow, mode=mode), command)
    assert (got.decision, got.jail) == (decision, jail), got.reason
    assert (got.runs_in.place if got.runs_in else "") == place
    assert got.to_json()["jail"] == jail
    assert got.to_json()["runs_in"] == (place or None)


def test_a_mixed_call_says_which_part_a_rule_allowed(tree: Tree) -> None:
    got = _bash(_engine(tree, allow=NPM), "cat src/a.py && npm test")
    assert got.runs_in is not None
    assert "`npm test` is allowed by a rule" in got.runs_in.why
    assert "not enforced" in got.runs_in.why


def test_a_read_in_an_additional_directory_keeps_the_jail(tree: Tree) -> None:
    # every jail can read; additionalDirectories are inside the boundary
    got = _bash(_engine(tree), f"cat {tree.shared}/x.txt")
    assert (got.decision, got.jail) == ("allow", "read-only")


def test_a_denied_call_runs_nowhere(tree: Tree) -> None:
    got = _bash(_engine(tree, deny=["Read(.env)"]), "cat .env")
    assert (got.decision, got.jail, got.runs_in) == ("deny", None, None)


def test_other_tools_are_not_jailed(tree: Tree) -> None:
    got = _engine(tree).decide("Read", {"file_path": str(tree.ws / "src" / "a.py")})
    assert (got.decision, got.jail, got.runs_in) == ("allow", None, None)


# --------------------------------------------------------------------- toolrun.enforce


def test_enforce_off_never_jails_and_says_so(tree: Tree) -> None:
    got = _bash(_engine(tree, enforce="off"), "ls")
    assert (got.decision, got.jail) == ("allow", None)
    assert got.runs_in is not None and "toolrun.enforce: off" in got.runs_in.why


def test_enforce_auto_without_a_jail_allows_and_never_probes(tree: Tree) -> None:
    # (the executor says once per run that no jail can be made: the decision stays cheap)
    engine = _engine(tree)
    engine.jail_unavailable = lambda: pytest.fail("probed under auto")  # type: ignore[assignment]
    got = _bash(engine, "ls")
    assert (got.decision, got.jail) == ("allow", "read-only")
    assert got.runs_in is not None and got.runs_in.place == "read-only jail"


@pytest.mark.parametrize("command", ["ls", "cat src/a.py", "git log -1", "wc -l src/a.py"])
def test_enforce_required_without_a_jail_asks_for_a_judged_call(tree: Tree, command: str) -> None:
    got = _bash(_engine(tree, enforce="required", unavailable="no bwrap"), command)
    assert (got.decision, got.jail) == ("ask", None)
    assert "toolrun.enforce: required" in got.reason and "no bwrap" in got.reason


def test_enforce_required_in_dont_ask_denies(tree: Tree) -> None:
    got = _bash(_engine(tree, enforce="required", unavailable="no bwrap", mode="dontAsk"), "ls")
    assert got.decision == "deny" and "toolrun.enforce: required" in got.reason


def test_enforce_required_with_a_jail_allows(tree: Tree) -> None:
    got = _bash(_engine(tree, enforce="required"), "ls")
    assert (got.decision, got.jail) == ("allow", "read-only")


def test_enforce_required_asks_for_a_mixed_call_even_with_a_jail(tree: Tree) -> None:
    # the jail cannot hold `cat` without breaking `npm test`: the judgement is not enforced
    got = _bash(_engine(tree, allow=NPM, enforce="required"), "cat src/a.py && npm test")
    assert got.decision == "ask" and "`npm test` is allowed by a rule" in got.reason


@pytest.mark.parametrize("command", ["npm test", "cd src && npm test"])
def test_enforce_required_leaves_rule_allowed_calls_alone(tree: Tree, command: str) -> None:
    got = _bash(_engine(tree, allow=NPM, enforce="required", unavailable="no bwrap"), command)
    assert (got.decision, got.jail) == ("allow", None)


def test_enforce_required_leaves_shell_builtins_alone(tree: Tree) -> None:
    # bash runs `cd` and `echo` itself: no jail is needed for them to be what they are
    got = _bash(_engine(tree, enforce="required", unavailable="no bwrap"), "cd src && echo hi")
    assert got.decision == "allow"
    assert {"cd", "echo"} <= SHELL_BUILTINS


def test_enforce_required_leaves_bypass_alone(tree: Tree) -> None:
    """bypass asks for nothing: where no jail can be made it runs as before (said once)."""
    got = _bash(_engine(tree, enforce="required", unavailable="no bwrap",
                        mode="bypassPermissions"), "cat src/a.py")
    assert (got.decision, got.jail) == ("allow", "masks")
    got = _bash(_engine(tree, enforce="off", mode="bypassPermissions"), "cat src/a.py")
    assert (got.decision, got.jail) == ("allow", None)


def test_bypass_in_the_users_sandbox_runs_there(tree: Tree) -> None:
    """The user's sandbox carries the same masks: no jail on top of it."""
    got = _bash(_engine(tree, mode="bypassPermissions", auto_allow_bash=True), "npm test")
    assert (got.decision, got.jail) == ("allow", None)
    assert got.runs_in is not None and got.runs_in.place == "sandbox"


# ------------------------------------------------------------- the user's sandbox


def test_a_judged_call_in_the_users_sandbox_still_runs_in_the_read_only_jail(tree: Tree) -> None:
    got = _bash(_engine(tree, auto_allow_bash=True), "ls")
    assert (got.decision, got.jail) == ("allow", "read-only")


def test_auto_allow_if_sandboxed_runs_in_the_sandbox(tree: Tree) -> None:
    engine = _engine(tree, auto_allow_bash=True)
    if engine.sandbox is None or not engine.sandbox.availability().ok:
        pytest.skip("bubblewrap cannot run here")
    got = _bash(engine, "npm test")
    assert (got.decision, got.decided_by.kind, got.jail) == ("allow", "sandbox", None)
    assert got.runs_in is not None and got.runs_in.place == "sandbox"


# ------------------------------------------------------ hooks and people (EngineDecider)


def _call(command: str) -> Call:
    return Call(index=0, turn=0, id="c1", tool="Bash", input={"command": command},
                params=None, timeout=None, location=Location("plan.yaml", 1, 1))  # type: ignore[arg-type]


def test_the_decider_hands_the_jail_on(tree: Tree) -> None:
    got = EngineDecider(_engine(tree)).decide(_call("ls"), tree.ws)
    assert (got.decision, got.jail) == ("allow", "read-only")


def test_a_pre_tool_use_hook_allow_runs_as_configured(tree: Tree) -> None:
    hooks = PreToolUseResult(decision="allow", reason="ok", decided_by=HookRef("guard.py", "x"))
    got = EngineDecider(_engine(tree)).decide(_call("ls"), tree.ws, hooks)
    assert (got.decision, got.jail, got.runs_in) == ("allow", None, "unsandboxed")
    assert got.runs_in_why is not None and "hook" in got.runs_in_why


def test_a_hook_allow_of_an_ask_runs_as_configured(tree: Tree) -> None:
    hooks = PreToolUseResult(decision="allow", reason="ok", decided_by=HookRef("guard.py", "x"))
    got = EngineDecider(_engine(tree)).decide(_call("npm test"), tree.ws, hooks)
    assert (got.decision, got.jail) == ("allow", None)


def test_an_ask_a_person_or_ask_allow_approves_carries_no_jail(tree: Tree) -> None:
    # `--ask allow` and "y" approve the decision as it is: an ask has no jail to keep
    got = EngineDecider(_engine(tree)).decide(_call("npm test"), tree.ws)
    assert (got.decision, got.jail) == ("ask", None)


def test_always_at_the_prompt_makes_a_rule_so_the_call_runs_as_configured(tree: Tree) -> None:
    decider = EngineDecider(_engine(tree))
    assert decider.decide(_call("cat src/a.py"), tree.ws).jail == "read-only"
    decider.allow_for_run(["Bash(cat src/a.py)"])
    got = decider.decide(_call("cat src/a.py"), tree.ws)
    assert (got.decision, got.jail) == ("allow", None)


def test_the_probe_runs_only_for_a_judged_call(tree: Tree, tmp_path: Path) -> None:
    calls: list[int] = []
    engine = _engine(tree, allow=NPM, enforce="required")
    engine.jail_unavailable = lambda: calls.append(1) or None  # type: ignore[func-returns-value]
    _bash(engine, "npm test")
    engine.decide("Read", {"file_path": str(tree.ws / "README.md")})
    assert calls == []
    _bash(engine, "ls")
    assert calls == [1]
