from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolrun.config import SourceKind, discover_config, load_config
from toolrun.errors import ConfigError, ExitCode


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


UNLOADED = (
    "warning: ~/.claude/settings.json (Claude Code user settings) was not loaded: its "
    "rules and hooks are not checked; user settings load only with "
    "toolrun.loadClaudeSettings: true, so that CI runs stay reproducible"
)

def problems_of(**kwargs: object) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(**kwargs)  # type: ignore[arg-type]
    assert info.value.exit_code is ExitCode.INVALID
    return [str(p) for p in info.value.problems]


def test_no_config_gives_defaults(tmp_path: Path) -> None:
    config = load_config(workspace=tmp_path)
    assert config.workspace == tmp_path.resolve()
    assert config.default_mode == "default"
    assert config.rules == ()
    assert config.toolrun.max_concurrency == 10
    assert config.toolrun.max_calls_per_turn == 64
    assert config.toolrun.hook_timeout == 600
    assert config.toolrun.hook_failure == "open"
    assert config.files == ()


def test_discovery_walks_up_from_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = write(tmp_path / "toolrun.yaml", "permissions: {allow: [Read]}\n")
    workspace = tmp_path / "a" / "b"
    workspace.mkdir(parents=True)
    assert discover_config(workspace) == found
    monkeypatch.chdir(tmp_path)
    config = load_config(workspace=workspace)
    assert [r.text for r in config.rules] == ["Read"]
    assert str(config.rules[0].source) == "toolrun.yaml:1"
    assert config.rules[0].source.root == tmp_path.resolve()


def test_every_rule_and_hook_keeps_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(
        tmp_path / "toolrun.yaml",
        """\
permissions:
  allow:
    - "Bash(npm run test:*)"
    - Read
  deny:
    - "Read(./.env)"
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - {type: command, command: ./guard.sh, timeout: 30, if: "Bash(git *)"}
""",
    )
    config = load_config(workspace=tmp_path)
    assert [(r.behavior, r.text, str(r.source)) for r in config.rules] == [
        ("allow", "Bash(npm run test:*)", "toolrun.yaml:3"),
        ("allow", "Read", "toolrun.yaml:4"),
        ("deny", "Read(./.env)", "toolrun.yaml:6"),
    ]
    (matcher,) = config.hooks
    assert (matcher.event, matcher.matcher, str(matcher.source)) == (
        "PreToolUse",
        "Bash",
        "toolrun.yaml:9",
    )
    (hook,) = matcher.hooks
    assert (hook.command, hook.timeout, hook.if_rule) == ("./guard.sh", 30, "Bash(git *)")
    assert str(hook.source) == "toolrun.yaml:11"


def test_explicit_config_and_settings_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = write(
        tmp_path / "conf" / "main.yaml",
        "permissions: {defaultMode: plan, deny: [WebFetch], additionalDirectories: [../lib]}\n"
        "toolrun: {maxConcurrency: 3, hookTimeout: 5}\n",
    )
    s1 = write(
        tmp_path / "s1.json", '{"permissions": {"allow": ["Read"], "defaultMode": "acceptEdits"}}'
    )
    s2 = write(
        tmp_path / "s2.json",
        '{"permissions": {"ask": ["Bash(git push *)"]}, "toolrun": {"maxConcurrency": 7}}',
    )
    config = load_config(workspace=tmp_path, config_file=cfg, settings_files=[s1, s2])
    # lists concatenate, highest source first (the last --settings file is highest)
    assert [(r.text, r.source.kind) for r in config.rules] == [
        ("Bash(git push *)", SourceKind.SETTINGS),
        ("Read", SourceKind.SETTINGS),
        ("WebFetch", SourceKind.TOOLRUN),
    ]
    # scalars come from the highest source that sets them
    assert config.default_mode == "acceptEdits"
    assert str(config.mode_source) == "s1.json:1"
    assert config.toolrun.max_concurrency == 7
    assert config.toolrun.hook_timeout == 5
    assert config.additional_directories == ((tmp_path / "lib").resolve(),)
    assert config.files == (Path("s2.json"), Path("s1.json"), Path("conf/main.yaml"))
    # --mode beats every file
    flagged = load_config(workspace=tmp_path, config_file=cfg, settings_files=[s1], mode="dontAsk")
    assert flagged.default_mode == "dontAsk"
    assert str(flagged.mode_source) == "--mode"


def test_a_claude_settings_json_loads_as_a_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = write(
        tmp_path / ".claude" / "settings.json",
        """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "env": {"FOO": "1"},
  "permissions": {"allow": ["Bash(npm run lint)"], "disableBypassPermissionsMode": "disable"},
  "hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt"}]}]}
}
""",
    )
    config = load_config(workspace=tmp_path, config_file=settings)
    assert [r.text for r in config.rules] == ["Bash(npm run lint)"]
    assert str(config.rules[0].source) == ".claude/settings.json:5"
    assert config.hooks[0].matcher == "Edit|Write"


def test_unknown_toolrun_key_suggests_the_right_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "toolrun.yaml", "toolrun:\n  maxConcurency: 4\n  hookFailure: shut\n")
    assert problems_of(workspace=tmp_path) == [
        (
            "toolrun.yaml:2:3: toolrun.maxConcurency: unknown key 'maxConcurency' "
            "(did you mean 'maxConcurrency'?)"
        ),
        "toolrun.yaml:3:3: toolrun.hookFailure: Input should be 'open' or 'closed'",
    ]


def test_bad_types_and_modes_are_located(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(
        tmp_path / "toolrun.yaml",
        "permissions:\n  defaultMode: yolo\n  allow: Read\nhooks:\n  PreToolUse:\n    - matcher: x\n",
    )
    assert problems_of(workspace=tmp_path) == [
        (
            "toolrun.yaml:2:3: permissions.defaultMode: Input should be 'default', "
            "'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions' or 'auto'"
        ),
        "toolrun.yaml:3:3: permissions.allow: Input should be a valid list",
        "toolrun.yaml:6:7: hooks.PreToolUse[0].hooks: missing required key 'hooks'",
    ]


def test_missing_explicit_config_and_bad_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert problems_of(workspace=tmp_path, config_file=Path("nope.yaml")) == [
        "nope.yaml: no such file"
    ]
    assert problems_of(workspace=tmp_path / "missing") == ["workspace missing is not a directory"]


def test_project_settings_load_always_and_user_settings_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    write(home / ".claude" / "settings.json", '{"permissions": {"deny": ["Bash(curl *)"]}}')
    write(tmp_path / ".claude" / "settings.json", '{"permissions": {"allow": ["Read"]}}')
    write(
        tmp_path / ".claude" / "settings.local.json",
        '{"permissions": {"ask": ["Edit"], "defaultMode": "plan"}}',
    )
    config = load_config(workspace=tmp_path, home=home, env={})
    assert [(r.text, r.source.kind) for r in config.rules] == [
        ("Edit", SourceKind.LOCAL),
        ("Read", SourceKind.PROJECT),
    ]
    assert config.default_mode == "plan"
    assert config.sources() == (".claude/settings.local.json", ".claude/settings.json")
    assert config.unloaded == (home / ".claude" / "settings.json",)
    assert config.warnings == (UNLOADED,)
    # not an error under --strict: reading it is a choice, not a mistake in a file
    assert load_config(workspace=tmp_path, home=home, env={}, strict=True).unloaded

    write(
        tmp_path / "toolrun.yaml",
        "toolrun: {loadClaudeSettings: true}\npermissions: {defaultMode: acceptEdits}\n",
    )
    config = load_config(workspace=tmp_path, home=home)
    assert [(r.text, r.source.kind) for r in config.rules] == [
        ("Edit", SourceKind.LOCAL),
        ("Read", SourceKind.PROJECT),
        ("Bash(curl *)", SourceKind.USER),
    ]
    assert config.rules[2].source.root == home / ".claude"
    assert config.default_mode == "acceptEdits"  # toolrun.yaml beats Claude local settings


def test_max_concurrency_env_sits_between_settings_and_toolrun_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "toolrun.yaml", "toolrun: {maxConcurrency: 3}\n")
    assert load_config(workspace=tmp_path, env={}).toolrun.max_concurrency == 3
    assert (
        load_config(
            workspace=tmp_path, env={"TOOLRUN_MAX_CONCURRENCY": "6"}
        ).toolrun.max_concurrency
        == 6
    )
    s = write(tmp_path / "s.json", '{"toolrun": {"maxConcurrency": 2}}')
    assert (
        load_config(
            workspace=tmp_path, settings_files=[s], env={"TOOLRUN_MAX_CONCURRENCY": "6"}
        ).toolrun.max_concurrency
        == 2
    )
    assert problems_of(workspace=tmp_path, env={"TOOLRUN_MAX_CONCURRENCY": "lots"}) == [
        "TOOLRUN_MAX_CONCURRENCY: must be a positive integer, not 'lots'"
    ]


# -- config files that used to crash toolrun (issue 12) -------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "start"),
    [
        ("s.yaml", "permissions: &p\n  allow: [*p]\n", "s.yaml:1:14: permissions"),
        ("s.yaml", "toolrun:\n  maxConcurrency: !!int x\n", "s.yaml:2:19: cannot read"),
        ("s.yaml", "permissions:\n  allow: !!float abc\n", "s.yaml:2:10: cannot read"),
        ("settings.json", "[" * 1000 + "]" * 1000, "settings.json:1:101: nested more than"),
        ("settings.json", '{"permissions": {"allow": ["\\ud800"]}}', "settings.json:1:28: "),
        (
            "settings.json",
            '{"toolrun": {"maxConcurrency": ' + "9" * 5000 + "}}",
            "settings.json:1:32",
        ),
    ],
)
def test_a_config_the_loader_cannot_read_is_a_located_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str, start: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / name, text)
    (found,) = problems_of(workspace=tmp_path, settings_files=[Path(name)])
    assert found.startswith(start), found


@pytest.mark.parametrize(
    ("setting", "path"),
    [
        ('"permissions": {"additionalDirectories": ["../a\\u0000"]}', "additionalDirectories[0]"),
        ('"mcpServers": {"s": {"command": "srv\\u0000"}}', "mcpServers.s.command"),
        (
            '"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "a\\u0000"}]}]}',
            "hooks.PreToolUse[0].hooks[0].command",
        ),
    ],
)
def test_a_nul_in_a_directory_or_command_is_refused_at_load_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, path: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "s.json", "{" + setting + "}")
    (found,) = problems_of(workspace=tmp_path, settings_files=[Path("s.json")])
    assert found.startswith("s.json:1:")
    assert f"{path}: holds a NUL character" in found


def test_a_config_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "toolrun.yaml"
    os.mkfifo(fifo)
    (found,) = problems_of(workspace=tmp_path, config_file=fifo)
    assert found.endswith("toolrun.yaml: is a FIFO, not a file")
    (utf16 := tmp_path / "s.json").write_bytes('{"permissions": {}}'.encode("utf-16"))
    (found,) = problems_of(workspace=tmp_path, settings_files=[utf16])
    assert found.endswith("s.json:1:1: UTF-16 text; toolrun reads UTF-8 only")
