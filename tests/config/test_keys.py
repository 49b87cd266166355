"""Every config key is known or reported: typos never switch a guard off silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.config import load_config
from toolrun.config.keys import CLAUDE_HOOK_EVENTS, toolrun_hook_events
from toolrun.errors import ConfigError


def config_at(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "toolrun.yaml"
    path.write_text(text)
    return path


def problems(tmp_path: Path, **kwargs: object) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, env={}, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize(
    ("text", "where", "hint"),
    [
        ("permissionz:\n  deny: [Bash]\n", "toolrun.yaml:1:1: permissionz", "'permissions'"),
        ("Permissions:\n  deny: [Bash]\n", "toolrun.yaml:1:1: Permissions", "'permissions'"),
        ("hook:\n  PreToolUse: []\n", "toolrun.yaml:1:1: hook", "'hooks'"),
        (
            "hooks:\n  PreToolUze:\n    - hooks: [{command: ./guard}]\n",
            "toolrun.yaml:2:3: hooks.PreToolUze",
            "'PreToolUse'",
        ),
        (
            "hooks:\n  pretooluse:\n    - hooks: [{command: ./guard}]\n",
            "toolrun.yaml:2:3: hooks.pretooluse",
            "'PreToolUse'",
        ),
        (
            "hooks:\n  PreToolUse:\n    - matchr: Bash\n      hooks: [{command: ./g}]\n",
            "toolrun.yaml:3:7: hooks.PreToolUse[0].matchr",
            "'matcher'",
        ),
        (
            "hooks:\n  PreToolUse:\n    - hooks: [{command: ./g, tiemout: 5}]\n",
            "hooks.PreToolUse[0].hooks[0].tiemout",
            "'timeout'",
        ),
    ],
)
def test_an_unknown_key_is_a_located_warning_with_a_hint(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str, where: str, hint: str
) -> None:
    config_at(tmp_path, text)
    config = load_config(workspace=tmp_path, env={})
    [warning] = [w for w in config.warnings if "unknown" in w]
    assert where in warning and f"did you mean {hint}" in warning
    assert warning in caplog.text  # logged, so the CLI shows it on stderr
    # strict: the same finding is an error, exit 3, located the same way
    errors = problems(tmp_path, strict=True)
    assert any(where in e and hint in e and "warning" not in e for e in errors)


def test_toolrun_strict_in_the_file_makes_warnings_errors(tmp_path: Path) -> None:
    config_at(tmp_path, "toolrun: {strict: true}\npermissionz: {deny: [Bash]}\n")
    [error] = problems(tmp_path)
    assert "toolrun.yaml:2:1: permissionz: unknown setting 'permissionz'" in error


def test_strict_from_the_environment(tmp_path: Path) -> None:
    config_at(tmp_path, "permissionz: {deny: [Bash]}\n")
    with pytest.raises(ConfigError):
        load_config(workspace=tmp_path, env={"TOOLRUN_STRICT": "1"})


def test_a_known_config_has_no_warning_even_with_a_sandbox_block(tmp_path: Path) -> None:
    config_at(
        tmp_path,
        "$schema: x\npermissions: {allow: [Read], deny: ['Bash(rm *)'], defaultMode: default}\n"
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      sequential: true\n"
        "      hooks: [{type: command, command: ./g, timeout: 3, if: 'Bash(git *)'}]\n"
        "sandbox:\n  enabled: true\n  network: {allowedDomains: [example.com]}\n"
        "  filesystem: {allowWrite: [/tmp]}\n"
        "toolrun: {strict: true, maxConcurrency: 4}\n",
    )
    config = load_config(workspace=tmp_path, env={})
    assert config.warnings == () and config.ignored == ()


def test_claude_code_keys_toolrun_does_not_enforce_are_listed_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config_at(
        tmp_path,
        "statusLine: {type: command, command: x}\nenv: {A: b}\nmodel: opus\n"
        "hooks:\n  Notification: [{hooks: [{command: ./x}]}]\n",
    )
    (tmp_path / "more.json").write_text('{"env": {"B": "c"}, "statusLine": {}}')
    config = load_config(workspace=tmp_path, env={}, settings_files=[tmp_path / "more.json"])
    assert config.ignored == ("env", "statusLine", "model", "hooks.Notification")
    [line] = [w for w in config.warnings if w.startswith("ignored: ")]
    assert line.startswith("ignored: env, statusLine, model, hooks.Notification")
    assert caplog.text.count("ignored: ") == 1
    # known keys are not errors, even when strict
    assert load_config(workspace=tmp_path, env={}, strict=True).ignored


def test_every_hook_event_toolrun_runs_is_a_claude_code_event() -> None:
    assert set(toolrun_hook_events()) <= CLAUDE_HOOK_EVENTS


def test_a_managed_only_key_outside_managed_settings_is_reported(tmp_path: Path) -> None:
    config_at(tmp_path, "allowManagedHooksOnly: true\n")
    [warning] = load_config(workspace=tmp_path, env={}).warnings
    assert "toolrun.yaml:1:1: allowManagedHooksOnly" in warning and "managed" in warning


@pytest.mark.parametrize(
    ("rule", "hint"),
    [("Reed(a)", "'Read'"), ("bash(ls)", "'Bash'"), ("Edits(src/**)", "'Edit'"), ("WebFetc", "")],
)
@pytest.mark.parametrize("behavior", ["allow", "ask", "deny"])
def test_an_unknown_tool_in_a_rule_is_a_located_error(
    tmp_path: Path, rule: str, hint: str, behavior: str
) -> None:
    config_at(tmp_path, f"permissions:\n  {behavior}:\n    - Read\n    - '{rule}'\n")
    [error] = problems(tmp_path)
    assert f"toolrun.yaml:4:7: permissions.{behavior}[1]: unknown tool" in error
    assert f"did you mean {hint}" in error if hint else "did you mean 'WebFetch'" in error


@pytest.mark.parametrize(
    "rule", ["mcp__github__get_file", "mcp__plugin_x_y__tool", "TodoWrite", "WebSearch", "Task"]
)
def test_claude_code_mcp_and_plugin_tools_are_known(tmp_path: Path, rule: str) -> None:
    config_at(tmp_path, f"permissions:\n  deny: ['{rule}']\n")
    load_config(workspace=tmp_path, env={})


def test_a_tool_glob_in_a_deny_rule_is_not_an_unknown_tool(tmp_path: Path) -> None:
    config_at(tmp_path, "permissions:\n  deny: ['*', 'mcp__*']\n")
    load_config(workspace=tmp_path, env={})


@pytest.mark.parametrize("matcher", ["Bash(", "[Bash", "Bash)", "*Bash", "(?P<x"])
def test_an_invalid_matcher_regex_is_a_located_error(tmp_path: Path, matcher: str) -> None:
    config_at(
        tmp_path,
        f"hooks:\n  PreToolUse:\n    - matcher: '{matcher}'\n      hooks: [{{command: ./g}}]\n",
    )
    [error] = problems(tmp_path)
    assert "toolrun.yaml:3:16: hooks.PreToolUse[0].matcher: invalid matcher" in error


@pytest.mark.parametrize("command", ["''", "' '", "'\t'"])
def test_an_empty_hook_command_is_a_located_error(tmp_path: Path, command: str) -> None:
    config_at(tmp_path, f"hooks:\n  PreToolUse:\n    - hooks:\n        - command: {command}\n")
    [error] = problems(tmp_path)
    assert "toolrun.yaml:4:" in error and "hooks.PreToolUse[0].hooks[0].command: " in error


def test_json_settings_are_located_too(tmp_path: Path) -> None:
    settings = tmp_path / "s.json"
    settings.write_text('{\n  "permissionz": {\n    "deny": ["Bash"]\n  }\n}\n')
    [warning] = load_config(workspace=tmp_path, env={}, settings_files=[settings]).warnings
    assert "s.json:2:3: permissionz" in warning and "'permissions'" in warning
