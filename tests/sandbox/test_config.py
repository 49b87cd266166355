"""The sandbox block: loaded, merged across sources like Claude Code's settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sandbox.conftest import write
from toolrun.config.loader import load_config
from toolrun.errors import ConfigError


def test_off_by_default_and_every_default_is_claude_codes(tmp_path: Path) -> None:
    settings = load_config(workspace=tmp_path).sandbox
    assert settings.enabled is False
    assert settings.auto_allow_bash is False
    assert settings.allow_unsandboxed is True
    assert settings.fail_if_unavailable is False
    assert settings.allowed_domains is None  # no network at all


def test_scalars_from_the_highest_source_and_lists_from_all(
    tmp_path: Path, _isolated_home: Path
) -> None:
    ws = tmp_path / "ws"
    write(
        ws / "toolrun.yaml",
        (
            "toolrun: {loadClaudeSettings: true}\n"
            "sandbox:\n  enabled: true\n  excludedCommands: ['docker *']\n"
            "  filesystem: {allowWrite: ['./out']}\n  network: {allowedDomains: [a.example]}\n"
        ),
    )
    write(
        ws / ".claude" / "settings.json",
        (
            '{"sandbox": {"enabled": false, "failIfUnavailable": true,'
            ' "excludedCommands": ["gh *"], "filesystem": {"allowWrite": ["/abs", "//old-abs"]},'
            ' "network": {"allowedDomains": ["*.b.example"]}}}'
        ),
    )
    write(
        _isolated_home / ".claude" / "settings.json",
        (
            '{"sandbox": {"autoAllowBashIfSandboxed": true,'
            ' "filesystem": {"denyRead": ["~/.ssh", "rel"]}}}'
        ),
    )
    settings = load_config(workspace=ws).sandbox
    assert settings.enabled is True  # toolrun.yaml beats the project settings
    assert settings.fail_if_unavailable is True
    assert settings.auto_allow_bash is True
    assert settings.excluded_commands == ("docker *", "gh *")
    assert settings.allow_write == (f"{ws}/out", "/abs", "/old-abs")
    assert settings.allowed_domains == ("a.example", "*.b.example")
    # ~/ is the home folder; a bare path is relative to the user settings' folder.
    assert settings.deny_read == (f"{_isolated_home}/.ssh", f"{_isolated_home}/.claude/rel")


def test_credentials_become_unreadable_paths_and_hidden_variables(tmp_path: Path) -> None:
    write(
        tmp_path / "toolrun.yaml",
        (
            "sandbox:\n  credentials:\n    files: [{path: ~/.aws, mode: deny}, {path: /k, mode: mask}]\n"
            "    envVars: [{name: GITHUB_TOKEN, mode: deny}]\n"
        ),
    )
    settings = load_config(workspace=tmp_path, home=tmp_path / "home").sandbox
    assert settings.deny_read == (f"{tmp_path}/home/.aws", "/k")
    assert settings.hidden_env == ("GITHUB_TOKEN",)


def test_a_bad_value_is_a_config_error_with_its_place(tmp_path: Path) -> None:
    write(tmp_path / "toolrun.yaml", "sandbox:\n  enabled: maybe\n")
    with pytest.raises(ConfigError) as caught:
        load_config(workspace=tmp_path)
    assert "sandbox.enabled" in str(caught.value)


def test_unknown_claude_code_sandbox_keys_are_accepted(tmp_path: Path) -> None:
    write(tmp_path / "toolrun.yaml", "sandbox:\n  enabled: true\n  ignoreViolations: {}\n")
    assert load_config(workspace=tmp_path).sandbox.enabled is True
