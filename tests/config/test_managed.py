"""Managed settings: the locks Claude Code's managed-settings.json enforces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolrun.config import SourceKind, load_config
from toolrun.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def managed(tmp_path: Path, settings: dict[str, object]) -> Path:
    return write(tmp_path / "etc" / "managed-settings.json", json.dumps(settings, indent=2))


DISABLE = {"permissions": {"disableBypassPermissionsMode": "disable"}}


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("toolrun.yaml", "permissions: {defaultMode: bypassPermissions}\n"),
        ("more.json", '{"permissions": {"defaultMode": "bypassPermissions"}}'),
        (
            ".claude/settings.local.json",
            '{"permissions": {"defaultMode": "bypassPermissions"}}',
        ),
    ],
)
def test_disable_bypass_forbids_a_config_asking_for_the_mode(
    tmp_path: Path, where: str, text: str
) -> None:
    write(tmp_path / where, text)
    if where != "toolrun.yaml":
        write(tmp_path / "toolrun.yaml", "toolrun: {loadClaudeSettings: true}\n")
    with pytest.raises(ConfigError) as info:
        load_config(
            workspace=tmp_path,
            env={},
            home=tmp_path / "home",
            settings_files=[tmp_path / "more.json"] if where == "more.json" else [],
            managed_settings=managed(tmp_path, DISABLE),
        )
    [problem] = info.value.problems
    assert "managed-settings.json:3:" in str(problem)
    assert "permissions.disableBypassPermissionsMode" in str(problem)
    assert "bypassPermissions mode is disabled" in str(problem)
    assert where.split("/")[-1] in str(problem)  # it names who asked for the mode too


def test_disable_bypass_in_the_project_config_forbids_the_flag(tmp_path: Path) -> None:
    write(tmp_path / "toolrun.yaml", "permissions:\n  disableBypassPermissionsMode: disable\n")
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, env={}, mode="bypassPermissions")
    assert "toolrun.yaml:2:33" in str(info.value.problems[0])
    assert "--mode" in str(info.value.problems[0])
    # other modes are fine
    assert load_config(workspace=tmp_path, env={}, mode="dontAsk").default_mode == "dontAsk"


def test_a_managed_default_mode_wins_over_the_command_line(tmp_path: Path) -> None:
    config = load_config(
        workspace=tmp_path,
        env={},
        mode="bypassPermissions",
        managed_settings=managed(tmp_path, {"permissions": {"defaultMode": "dontAsk"}}),
    )
    assert config.default_mode == "dontAsk"
    assert config.mode_source is not None and config.mode_source.kind is SourceKind.MANAGED


def test_managed_rules_only_drops_every_other_sources_rules(tmp_path: Path) -> None:
    write(tmp_path / "toolrun.yaml", "permissions: {allow: ['Bash(curl *)', Read]}\n")
    extra = write(tmp_path / "s.json", '{"permissions": {"allow": ["Bash"]}}')
    config = load_config(
        workspace=tmp_path,
        env={},
        settings_files=[extra],
        managed_settings=managed(
            tmp_path,
            {"allowManagedPermissionRulesOnly": True, "permissions": {"deny": ["WebFetch"]}},
        ),
    )
    assert [(r.behavior, r.text) for r in config.rules] == [("deny", "WebFetch")]
    assert len(config.policy_notes) == 2
    assert all("allowManagedPermissionRulesOnly" in n for n in config.policy_notes)
    assert any("2 permission rules from" in n and "toolrun.yaml" in n for n in config.policy_notes)
    assert all(n in config.warnings for n in config.policy_notes)


def test_managed_hooks_only_drops_every_other_sources_hooks(tmp_path: Path) -> None:
    write(
        tmp_path / "toolrun.yaml",
        "hooks:\n  PreToolUse:\n    - hooks: [{command: ./allow-everything}]\n",
    )
    guard = {"hooks": [{"type": "command", "command": "./managed-guard"}]}
    config = load_config(
        workspace=tmp_path,
        env={},
        managed_settings=managed(
            tmp_path, {"allowManagedHooksOnly": True, "hooks": {"PreToolUse": [guard]}}
        ),
    )
    assert [h.command for m in config.hooks for h in m.hooks] == ["./managed-guard"]
    assert config.policy_notes and "allowManagedHooksOnly" in config.policy_notes[0]


def test_the_locks_only_count_in_a_managed_file(tmp_path: Path) -> None:
    write(
        tmp_path / "toolrun.yaml",
        "allowManagedPermissionRulesOnly: true\npermissions: {allow: [Read]}\n",
    )
    config = load_config(workspace=tmp_path, env={})
    assert [r.text for r in config.rules] == ["Read"]
    assert "only enforced in a managed settings file" in config.warnings[0]


def test_claude_codes_linux_location_is_read_without_a_flag(tmp_path: Path) -> None:
    """Managed settings are the organisation's policy: read where Claude Code reads them,
    loadClaudeSettings or not (it only adds the user's own settings)."""
    etc = managed(tmp_path, {"permissions": {"deny": ["WebFetch"]}})
    for toolrun in ("toolrun: {loadClaudeSettings: true}\n", "toolrun: {}\n"):
        write(tmp_path / "toolrun.yaml", toolrun)
        config = load_config(workspace=tmp_path, env={}, home=tmp_path, managed_path=etc)
        assert [(r.text, r.source.kind) for r in config.rules] == [
            ("WebFetch", SourceKind.MANAGED)
        ]
    # --managed-settings names the one to read instead
    other = managed(tmp_path / "o", {"permissions": {"deny": ["Read"]}})
    config = load_config(
        workspace=tmp_path, env={}, home=tmp_path, managed_path=etc, managed_settings=other
    )
    assert [r.text for r in config.rules] == ["Read"]


def test_the_environment_names_a_managed_file_for_every_command(tmp_path: Path) -> None:
    etc = managed(tmp_path, {"permissions": {"deny": ["WebFetch"]}})
    config = load_config(workspace=tmp_path, env={"TOOLRUN_MANAGED_SETTINGS": str(etc)})
    assert [r.text for r in config.rules] == ["WebFetch"]


def toolrun(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolrun", *args],
        check=False,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_exec_in_bypass_mode_refuses_to_run_anything(tmp_path: Path) -> None:
    etc = managed(tmp_path, DISABLE)
    write(
        tmp_path / "plan.yaml",
        "calls:\n  - {tool: Bash, input: {command: 'touch ran'}}\n",
    )
    done = toolrun(
        "exec", "--mode", "bypassPermissions", "plan.yaml",
        cwd=tmp_path, env={"TOOLRUN_MANAGED_SETTINGS": str(etc)},
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "bypassPermissions mode is disabled" in done.stderr
    assert "managed-settings.json:3:" in done.stderr
    assert not (tmp_path / "ran").exists()


def test_check_and_validate_take_managed_settings_and_strict(tmp_path: Path) -> None:
    etc = managed(tmp_path, {"allowManagedPermissionRulesOnly": True})
    write(tmp_path / "toolrun.yaml", "permissions: {allow: [WebFetch]}\n")
    write(tmp_path / "plan.yaml", "calls:\n  - {tool: WebFetch, input: {url: 'https://x.io'}}\n")
    plain = toolrun("check", "--format", "json", "--mode", "dontAsk", "plan.yaml", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    locked = toolrun(
        "check", "--format", "json", "--mode", "dontAsk", "--managed-settings", str(etc),
        "plan.yaml", cwd=tmp_path,
    )  # fmt: skip
    assert locked.returncode == 4
    assert "allowManagedPermissionRulesOnly" in locked.stderr
    report = json.loads(locked.stdout)
    assert any("allowManagedPermissionRulesOnly" in w for w in report["config_warnings"])
    write(tmp_path / "toolrun.yaml", "permissionz: {allow: [WebFetch]}\n")
    assert toolrun("validate", "plan.yaml", cwd=tmp_path).returncode == 0
    strict = toolrun("validate", "--strict", "plan.yaml", cwd=tmp_path)
    assert strict.returncode == 3 and "did you mean 'permissions'" in strict.stderr


def test_explain_permission_says_the_rules_were_dropped(tmp_path: Path) -> None:
    etc = managed(tmp_path, {"allowManagedPermissionRulesOnly": True})
    write(tmp_path / "toolrun.yaml", "permissions: {allow: [WebFetch]}\n")
    done = toolrun(
        "explain-permission", "WebFetch", "https://x.io",
        cwd=tmp_path, env={"TOOLRUN_MANAGED_SETTINGS": str(etc)},
    )  # fmt: skip
    assert done.returncode == 5  # ask: the allow rule is not used
    assert "allowManagedPermissionRulesOnly" in done.stderr
    assert "1 permission rule from" in done.stderr


def test_a_self_test_in_bypass_mode_is_refused_too(tmp_path: Path) -> None:
    write(
        tmp_path / "toolrun.yaml",
        "permissions: {disableBypassPermissionsMode: disable}\ntoolrun:\n  examples:\n"
        "    - {call: 'Bash(git status)', expect: allow, mode: bypassPermissions}\n",
    )
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, env={})
    assert "asked for by" in str(info.value) and "toolrun.yaml:4" in str(info.value)
