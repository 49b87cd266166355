"""Every documented Claude Code key is known, so an unknown key is a typo; a typo in a
security key is an error; a key that would restrict and is not enforced is said loudly
(issue 26, points 5 and 6)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.config import load_config
from toolrun.config.claude_keys import KEYS, MANAGED_ONLY, RESTRICTING
from toolrun.config.fastpath import SHAPES
from toolrun.config.keys import CLAUDE_TOOLS, near_miss, one_edit
from toolrun.errors import ConfigError
from toolrun.permissions.claude_tools import TOOLS

_SECTIONS = {
    "": "ConfigFile",
    "permissions": "PermissionsSection",
    "sandbox": "SandboxSection",
    "sandbox.filesystem": "SandboxFilesystemSection",
    "sandbox.network": "SandboxNetworkSection",
    "sandbox.credentials": "SandboxCredentialsSection",
}


def problems(tmp_path: Path, **kwargs: object) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, env={}, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in info.value.problems]


# -- the table ---------------------------------------------------------------------------


def test_every_enforced_key_is_a_field_toolrun_reads_and_no_field_is_left_out() -> None:
    for key, status in KEYS.items():
        section, _, name = key.rpartition(".")
        if status == "enforced":
            assert name in SHAPES[_SECTIONS[section]].keys, key
    for section, model in _SECTIONS.items():
        for name in SHAPES[model].keys - {"toolrun", "mcpServers", "allowPrivateHosts"}:
            key = f"{section}.{name}" if section else name
            assert KEYS.get(key) == "enforced", key
    assert MANAGED_ONLY <= {k for k, s in KEYS.items() if s == "enforced"}
    assert set(RESTRICTING) == {k for k, s in KEYS.items() if s == "restricting"}


def test_the_tools_decided_as_claude_code_decides_them_are_known_rule_names() -> None:
    assert set(TOOLS) <= CLAUDE_TOOLS


@pytest.mark.parametrize(
    "key",
    # the 15 the issue found warned as unknown, and more of the current reference
    ["agent", "effortLevel", "worktree", "autoMode", "claudeMdExcludes", "advisorModel",
     "fastMode", "tui", "viewMode", "modelSettings", "disableAgentView", "voice", "timeZone",
     "skillOverrides", "autoMemoryEnabled", "prUrlTemplate", "defaultShell"],
)  # fmt: skip
def test_documented_top_level_keys_are_known_not_typos(tmp_path: Path, key: str) -> None:
    (tmp_path / "toolrun.yaml").write_text(f"{key}: x\n")
    config = load_config(workspace=tmp_path, env={}, strict=True)
    assert key in config.ignored
    assert not [w for w in config.warnings if "unknown" in w]


@pytest.mark.parametrize(
    "text",
    [
        "sandbox: {ripgrep: {command: rg}}\n",
        "sandbox: {network: {strictAllowlist: true, tlsTerminate: false}}\n",
        "sandbox: {filesystem: {disabled: true}}\n",
        "sandbox: {credentials: {sigv4: fail}}\n",
        "permissions: {disableAutoMode: disable}\n",
    ],
)
def test_documented_sandbox_keys_that_cannot_loosen_are_ignored(tmp_path: Path, text: str) -> None:
    (tmp_path / "toolrun.yaml").write_text(text)
    config = load_config(workspace=tmp_path, env={}, strict=True)
    assert config.ignored and not [w for w in config.warnings if "unknown" in w]


@pytest.mark.parametrize(
    ("text", "where", "key"),
    [
        ("deniedMcpServers: [{serverName: x}]\n", "toolrun.yaml:1:1", "deniedMcpServers"),
        ("allowedMcpServers: []\n", "toolrun.yaml:1:1", "allowedMcpServers"),
        (
            "permissions: {blockReadsOutsideWorkingDirectories: true}\n",
            "toolrun.yaml:1:15",
            "permissions.blockReadsOutsideWorkingDirectories",
        ),
        ("strictPluginOnlyCustomization: true\n", "toolrun.yaml:1:1",
         "strictPluginOnlyCustomization"),
    ],
)
def test_a_restricting_key_toolrun_does_not_enforce_is_loud_and_an_error_when_strict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, where: str, key: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text(text)
    config = load_config(workspace=tmp_path, env={})
    [warning] = [w for w in config.warnings if "NOT ENFORCED" in w]
    assert warning.startswith(f"{where}: {key}: warning: NOT ENFORCED: {key} restricts Claude")
    assert "this check is looser than Claude Code (an error with --strict)" in warning
    [error] = problems(tmp_path, strict=True)
    assert error.startswith(f"{where}: {key}: NOT ENFORCED: {key} restricts Claude Code")


# -- typos in security keys ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "one"),
    [("deney", "deny", True), ("alow", "allow", True), ("defualtMode", "defaultMode", True),
     ("dney", "deny", True), ("deny", "deny", False), ("denny2", "deny", False),
     ("asK", "ask", True), ("ask", "allow", False)],
)  # fmt: skip
def test_one_edit_is_damerau_levenshtein_distance_one(a: str, b: str, one: bool) -> None:
    assert one_edit(a, b) is one


@pytest.mark.parametrize(
    ("key", "hint"),
    [("deney", "deny"), ("alow", "allow"), ("defualtMode", "defaultMode"), ("Deny", "deny"),
     ("asks", "ask"), ("additionalDirectory", "additionalDirectories")],
)  # fmt: skip
def test_a_typo_under_permissions_is_a_located_error_in_yaml(
    tmp_path: Path, key: str, hint: str
) -> None:
    (tmp_path / "toolrun.yaml").write_text(f"permissions:\n  allow: [Read]\n  {key}: [Bash]\n")
    [error] = problems(tmp_path)
    assert error.endswith(
        f"toolrun.yaml:3:3: permissions.{key}: unknown permissions key {key!r} (did you mean "
        f"{hint!r}?); a misspelt permissions key is an error: what it sets would be silently lost"
    )


@pytest.mark.parametrize(
    ("block", "key", "hint"),
    [("", "enabeld", "enabled"), ("", "excludedCommand", "excludedCommands"),
     ("filesystem", "denyRaed", "denyRead"), ("filesystem", "alowRead", "allowRead"),
     ("network", "deniedDomain", "deniedDomains"), ("network", "allowedDomain", "allowedDomains")],
)  # fmt: skip
def test_a_typo_under_sandbox_is_a_located_error_in_json(
    tmp_path: Path, block: str, key: str, hint: str
) -> None:
    inner: dict[str, object] = {key: True}
    sandbox = {block: inner} if block else inner
    settings = tmp_path / "s.json"
    settings.write_text(json.dumps({"sandbox": sandbox}, indent=2))
    [error] = problems(tmp_path, settings_files=[settings])
    path = ".".join(p for p in ("sandbox", block, key) if p)
    line, col = (3, 5) if not block else (4, 7)
    assert error.endswith(
        f"s.json:{line}:{col}: {path}: unknown sandbox key {key!r} (did you mean {hint!r}?); "
        "a misspelt sandbox key is an error: what it sets would be silently lost"
    )


def test_a_typo_in_the_projects_claude_settings_fails_check_with_exit_3(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        '{\n  "permissions": {\n    "deney": ["Read(./.env)"]\n  }\n}\n'
    )
    (tmp_path / "plan.yaml").write_text("calls: [{tool: Bash, input: {command: 'cat .env'}}]\n")
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "check", "plan.yaml"],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 3
    assert done.stderr.startswith(
        ".claude/settings.json:3:5: permissions.deney: unknown permissions key 'deney' "
        "(did you mean 'deny'?); a misspelt permissions key is an error"
    )


def test_other_unknown_keys_stay_warnings(tmp_path: Path) -> None:
    (tmp_path / "toolrun.yaml").write_text(
        "permissions: {frobnicate: 1}\nsandbox: {network: {zzz: 1}}\npermissionz: {}\n"
    )
    config = load_config(workspace=tmp_path, env={})
    assert [w.split(": ", 2)[1] for w in config.warnings if "unknown" in w] == [
        "permissionz", "permissions.frobnicate", "sandbox.network.zzz"
    ]  # fmt: skip
    assert near_miss("frobnicate", ["allow", "deny"]) == ""


# -- modes, Cd rules, tools without permission -------------------------------------------------


def test_default_mode_auto_loads_and_is_decided_as_default_said_once(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"permissions": {"defaultMode": "auto"}}')
    (tmp_path / "plan.yaml").write_text("calls: [{tool: Bash, input: {command: 'rm -r x'}}]\n")
    config = load_config(workspace=tmp_path, env={})
    assert config.default_mode == "default"
    note = (
        "permission mode auto (.claude/settings.json:1): toolrun runs no classifier, so calls "
        "are decided as in default mode (what the classifier would have judged asks)"
    )
    assert config.warnings == (note,)
    result = runner.invoke(main, ["check", "plan.yaml", "--format", "json", "--fail-on", "ask"])
    assert result.exit_code == 5
    data = json.loads(result.stdout)
    assert data["config_warnings"] == [note] and data["results"][0]["decision"] == "ask"
    assert result.stderr.count("permission mode auto") == 1


def test_mode_auto_on_the_command_line(runner: CliRunner, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["explain-permission", "--mode", "auto", "Bash", "rm -r x"])
    assert result.exit_code == 5
    assert "mode:       default (from --mode)" in result.stdout
    assert result.stderr.count("permission mode auto (--mode): toolrun runs no classifier") == 1


@pytest.mark.parametrize("behavior", ["allow", "ask", "deny"])
@pytest.mark.parametrize(
    "rule", ["Cd(../other)", "Cd", "EndConversation", "CronCreate", "Monitor(npm run dev)",
             "Workflow", "ListMcpResourcesTool", "SendMessage"]
)  # fmt: skip
def test_cd_rules_and_claude_codes_current_tools_load(
    tmp_path: Path, behavior: str, rule: str
) -> None:
    (tmp_path / "toolrun.yaml").write_text(f"permissions:\n  {behavior}: ['{rule}']\n")
    assert [r.text for r in load_config(workspace=tmp_path, env={}).rules] == [rule]


def test_end_conversation_needs_no_permission_and_monitor_asks(tmp_path: Path) -> None:
    """As a session's recorded calls are decided (the engine's table of Claude Code tools)."""
    from toolrun.permissions import PermissionEngine

    (tmp_path / "toolrun.yaml").write_text("permissions: {deny: [Workflow]}\n")
    engine = PermissionEngine(load_config(workspace=tmp_path, env={}))
    decided = {
        tool: engine.decide(tool, args).decision
        for tool, args in (
            ("EndConversation", {}),
            ("Monitor", {"command": "tail -f log"}),
            ("Workflow", {"script": "x"}),
        )
    }
    assert decided == {"EndConversation": "allow", "Monitor": "ask", "Workflow": "deny"}


@pytest.mark.parametrize(("tool", "code"), [("EndConversation", 0), ("CronList", 0), ("Monitor", 5)])
def test_explain_permission_takes_claude_codes_own_tools(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, code: int
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["explain-permission", tool, '{"command": "x"}'])
    assert result.exit_code == code, result.output
    assert f"call:       {tool} " in result.stdout
