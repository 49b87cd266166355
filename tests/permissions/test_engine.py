"""The engine: compile errors with file:line, the Decision object, the trace, registry tools."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import pytest

from tests.permissions.conftest import Tree, decide, make_config, source
from toolrun.config.models import Config, PermissionRule, SettingSource, SourceKind
from toolrun.errors import ConfigError, ExitCode
from toolrun.permissions import Decision, PermissionEngine
from toolrun.tools.base import BaseTool, ToolContext, ToolInput, ToolKind
from toolrun.tools.registry import ToolRegistry


def test_malformed_rules_are_config_errors_at_file_line(tree: Tree) -> None:
    # An unanchored allow glob ("*") is no error: Claude Code skips it, and so does toolrun.
    config = make_config(tree.ws, allow=("Bash(npm test)", "Bash(git", "*"), deny=("Read(~x)",))
    with pytest.raises(ConfigError) as info:
        PermissionEngine(config)
    assert info.value.exit_code == ExitCode.INVALID
    problems = info.value.problems
    assert len(problems) == 2
    where = [f"{p.location.line}" if p.location else "" for p in problems]
    assert where == ["2", "4"]  # deny line 2, allow lines 3..5
    text = str(info.value)
    assert f"{tree.ws / 'toolrun.yaml'}:4:1: permissions.allow[1]: 'Bash(git'" in text
    assert "permissions.deny[0]" in text


def test_rule_from_a_flag_has_no_file(tree: Tree) -> None:
    flag = SettingSource(SourceKind.CLI, None, 0, tree.ws, flag="--allow")
    config = Config(workspace=tree.ws, rules=(PermissionRule("allow", "Bash(", flag),))
    with pytest.raises(ConfigError, match="--allow permissions.allow\\[0\\]"):
        PermissionEngine(config)


def test_decision_is_frozen_and_json(tree: Tree) -> None:
    d = decide(tree, "Bash", {"command": "git status && npm test"}, allow=("Bash(npm *)",),
               deny=("Bash(rm *)",))
    assert isinstance(d, Decision)
    with pytest.raises(FrozenInstanceError):
        d.decision = "deny"  # type: ignore[misc]
    data = json.loads(json.dumps(d.to_json()))
    assert data["decision"] == "allow"
    assert data["decided_by"] == {
        "kind": "rule", "rule": "Bash(npm *)", "source": f"{tree.ws / 'toolrun.yaml'}:3"
    }
    assert [s["command"] for s in data["subcommands"]] == ["git status", "npm test"]
    assert [s["decided_by"]["kind"] for s in data["subcommands"]] == ["readonly", "rule"]
    assert {r["rule"] for r in data["rules"]} == {"Bash(npm *)", "Bash(rm *)"}
    assert {"decision", "reason", "decided_by", "subcommands", "rules", "mode"} <= set(data)


def test_trace_lists_every_rule_with_why_and_shadowing(tree: Tree) -> None:
    d = decide(
        tree,
        "Bash",
        {"command": "git push origin main"},
        deny=("Read(.env)",),
        ask=("Bash(git push *)",),
        allow=("Bash(git *)", "Bash(npm test)", "WebFetch"),
    )
    assert d.decision == "ask"
    by_text = {r.text: r for r in d.rules}
    assert [r.text for r in d.rules] == [
        "Read(.env)", "Bash(git push *)", "Bash(git *)", "Bash(npm test)", "WebFetch"
    ]
    assert by_text["Bash(git push *)"].decisive and by_text["Bash(git push *)"].matched
    shadowed = by_text["Bash(git *)"]
    assert shadowed.matched and shadowed.shadowed and not shadowed.decisive
    assert "shadowed" in shadowed.why and "Bash(git push *)" in shadowed.why
    assert not by_text["Bash(npm test)"].matched
    assert "does not match 'git push origin main'" in by_text["Bash(npm test)"].why
    assert by_text["WebFetch"].why == "is for WebFetch, not Bash"
    assert all(r.source.endswith(tuple(f":{n}" for n in range(2, 7))) for r in d.rules)


def test_plan_mode_overrides_a_matching_allow_rule_in_the_trace(tree: Tree) -> None:
    d = decide(tree, "Bash", {"command": "npm test"}, allow=("Bash(npm test)",), mode="plan")
    assert d.decision == "deny" and d.decided_by.kind == "mode"
    (rule,) = d.rules
    assert rule.matched and rule.decisive and "overridden" in rule.why


def test_denial_names_rule_and_source(tree: Tree) -> None:
    d = decide(tree, "Bash", {"command": "ls && rm -rf build"}, deny=("Bash(rm *)",))
    assert d.decision == "deny"
    assert d.decided_by.rule == "Bash(rm *)"
    assert d.decided_by.source == f"{tree.ws / 'toolrun.yaml'}:2"
    assert "Bash(rm *)" in d.reason and f"{tree.ws / 'toolrun.yaml'}:2" in d.reason


def test_dontask_denial_names_the_ask_rule(tree: Tree) -> None:
    d = decide(tree, "Bash", {"command": "git push"}, ask=("Bash(git push *)",), mode="dontAsk")
    assert d.decision == "deny"
    assert d.decided_by.rule == "Bash(git push *)"
    assert "dontAsk" in d.reason


def test_mode_source_and_override(tree: Tree) -> None:
    config = make_config(tree.ws, mode="acceptEdits")
    engine = PermissionEngine(config)
    d = engine.decide("Write", {"file_path": "src/x.py", "content": ""})
    assert (d.decision, d.mode, d.mode_source) == (
        "allow", "acceptEdits", f"{tree.ws / 'toolrun.yaml'}:1"
    )
    d = engine.decide("Write", {"file_path": "src/x.py", "content": ""}, mode="plan")
    assert (d.decision, d.mode, d.mode_source) == ("deny", "plan", "the caller")
    with pytest.raises(ValueError, match="unknown permission mode"):
        engine.decide("Read", {"file_path": "x"}, mode="yolo")


def test_cwd_for_bash(tree: Tree) -> None:
    engine = PermissionEngine(make_config(tree.ws))
    assert engine.decide("Bash", {"command": "cat a.py"}, cwd=tree.ws / "src").decision == "allow"
    assert engine.decide("Bash", {"command": "cat a.py"}, cwd=Path("/etc")).decision == "ask"
    assert engine.decide("Bash", {"command": "cat a.py"}, cwd=Path("src")).cwd == str(
        tree.ws / "src"
    )


def test_bash_subcommand_targets(tree: Tree) -> None:
    d = decide(tree, "Bash", {"command": "echo hi > out.txt && cat .env"},
               deny=("Read(.env)",), mode="acceptEdits")
    assert d.decision == "deny"
    first, second = d.subcommands
    assert first.decision == "allow"
    assert [t.what for t in first.targets] == ["redirect >"]
    assert second.decision == "deny" and second.targets[0].what == "cat argument"
    assert [b.what for b in d.boundary] == ["redirect >", "cat argument"]


def test_rule_order_in_merged_sources_is_deny_first(tree: Tree) -> None:
    """A deny in a low-precedence file beats an allow in a high-precedence one."""
    high = SettingSource(SourceKind.SETTINGS, tree.ws / "cli.json", 3, tree.ws)
    low = SettingSource(SourceKind.USER, tree.home / ".claude" / "settings.json", 9, tree.home)
    config = Config(
        workspace=tree.ws,
        rules=(PermissionRule("allow", "Bash(rm -rf build)", high),
               PermissionRule("deny", "Bash(rm *)", low)),
    )
    d = PermissionEngine(config).decide("Bash", {"command": "rm -rf build"})
    assert d.decision == "deny"
    assert d.decided_by.source == f"{tree.home / '.claude' / 'settings.json'}:9"


def test_slash_anchor_is_relative_to_the_source_root(tree: Tree) -> None:
    user = SettingSource(SourceKind.USER, tree.home / ".claude" / "settings.json", 2,
                         tree.home / ".claude")
    config = Config(workspace=tree.ws, rules=(PermissionRule("deny", "Read(/secrets/**)", user),))
    engine = PermissionEngine(config)
    assert engine.decide("Read", {"file_path": "secrets/x"}).decision == "allow"
    assert engine.decide(
        "Read", {"file_path": str(tree.home / ".claude" / "secrets" / "x")}
    ).decision == "deny"


# --------------------------------------------------------------------------- registry tools


class _In(ToolInput):
    target: str


class _Fake(BaseTool[_In]):
    name = "plugin_tool"
    input_model = _In
    kind = ToolKind.READ

    def affected_paths(self, input: _In, ctx: ToolContext) -> tuple[Path, ...]:
        return (ctx.resolve(input.target),)


class _FakeWriter(_Fake):
    name = "plugin_writer"
    kind = ToolKind.WRITE


class _FakeNet(BaseTool[_In]):
    name = "mcp__web__get"
    input_model = _In
    kind = ToolKind.NETWORK


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    for tool in (_Fake(), _FakeWriter(), _FakeNet()):
        registry.register(tool, source="test")
    return registry


@pytest.mark.parametrize(
    ("tool", "input", "rules", "mode", "expected"),
    [
        ("plugin_tool", {"target": "src/a.py"}, {}, "default", "allow"),
        ("plugin_tool", {"target": "/etc/passwd"}, {}, "default", "ask"),
        ("plugin_tool", {"target": ".env"}, {"deny": ("Read(.env)",)}, "default", "deny"),
        ("plugin_tool", {"target": "src/a.py"}, {"allow": ("Read(/etc/**)",)}, "default",
         "allow"),
        ("plugin_tool", {"target": "/etc/x"}, {"allow": ("Read(//etc/**)",)}, "default", "ask"),
        ("plugin_tool", {"target": "/etc/x"}, {"allow": ("plugin_tool",)}, "default", "allow"),
        ("plugin_tool", {"nope": 1}, {}, "default", "ask"),
        ("plugin_writer", {"target": "src/a.py"}, {}, "default", "ask"),
        ("plugin_writer", {"target": "src/a.py"}, {}, "acceptEdits", "allow"),
        ("plugin_writer", {"target": ".git/x"}, {}, "bypassPermissions", "ask"),
        ("plugin_writer", {"target": "src/a.py"}, {}, "plan", "deny"),
        ("mcp__web__get", {"target": "x"}, {}, "plan", "ask"),
        ("mcp__web__get", {"target": "x"}, {"allow": ("mcp__web",)}, "default", "allow"),
    ],
)
def test_registry_tools(
    tree: Tree, tool: str, input: dict[str, Any], rules: dict[str, tuple[str, ...]], mode: str,
    expected: str,
) -> None:
    config = make_config(
        tree.ws, mode=mode, allow=rules.get("allow", ()), deny=rules.get("deny", ()),
        ask=rules.get("ask", ()),
    )
    d = PermissionEngine(config, _registry()).decide(tool, input)
    assert d.decision == expected, d.reason


def test_engine_needs_no_builtin_tools(tree: Tree) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from toolrun.config.models import Config\n"
        "from toolrun.permissions import PermissionEngine\n"
        f"e = PermissionEngine(Config(workspace=Path({str(tree.ws)!r})))\n"
        "assert e.decide('Read', {'file_path': 'x'}).decision == 'allow'\n"
        "print('toolrun.tools.builtins' in sys.modules, 'tree_sitter' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_source_helper_line(tree: Tree) -> None:
    assert str(source(tree.ws, 7)) == f"{tree.ws / 'toolrun.yaml'}:7"
