"""``toolrun.autoVerify`` in the config: parsed, merged, and every mistake located."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.config import load_config
from toolrun.errors import ConfigError

GOOD = """\
toolrun:
  autoVerify:
    - name: ruff
      files: ["*.py", "!build/"]
      command: ruff check --output-format json {files}
      format: json
      block: true
    - name: tsc
      files: ["*.ts"]
      command: npx tsc --noEmit
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # problems name the file relative to here


def problems(ws: Path, text: str) -> list[str]:
    (ws / "toolrun.yaml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(workspace=ws, env={})
    return [str(p) for p in info.value.problems]


def test_off_unless_the_config_asks(tmp_path: Path) -> None:
    assert load_config(workspace=tmp_path, env={}).toolrun.auto_verify == ()


def test_verifiers_load_with_their_defaults_and_source(tmp_path: Path) -> None:
    (tmp_path / "toolrun.yaml").write_text(GOOD)
    ruff, tsc = load_config(workspace=tmp_path, env={}).toolrun.auto_verify
    assert (ruff.name, ruff.files, ruff.format, ruff.block, ruff.timeout) == (
        "ruff", ("*.py", "!build/"), "json", True, 60.0
    )
    assert (tsc.format, tsc.block) == ("text", False)
    assert str(ruff.source) == "toolrun.yaml:3" and str(tsc.source) == "toolrun.yaml:8"


def test_a_misspelt_key_is_located_with_a_hint(tmp_path: Path) -> None:
    text = GOOD.replace("      block: true", "      blok: true")
    assert problems(tmp_path, text) == [
        "toolrun.yaml:7:7: toolrun.autoVerify[0].blok: unknown key 'blok' (did you mean 'block'?)"
    ]
    assert "did you mean 'autoVerify'" in problems(tmp_path, "toolrun:\n  autoverify: []\n")[0]


@pytest.mark.parametrize(
    ("line", "replacement", "expected"),
    [
        ("      format: json", "      format: xml",
         "toolrun.yaml:6:7: toolrun.autoVerify[0].format: Input should be 'sarif', 'json' or 'text'"),
        ("      block: true", "      timeout: 0",
         "toolrun.yaml:7:7: toolrun.autoVerify[0].timeout: Input should be greater than 0"),
        ("      command: ruff check --output-format json {files}", "      command: '  '",
         "toolrun.yaml:5:16: toolrun.autoVerify[0].command: empty command: the verifier would do nothing"),
        ('      files: ["*.py", "!build/"]', '      files: ["*.py", "[z-a].py"]',
         "toolrun.yaml:4:23: toolrun.autoVerify[0].files[1]: invalid pattern '[z-a].py'"),
        ('      files: ["*.py", "!build/"]', "      files: []",
         "toolrun.yaml:4:7: toolrun.autoVerify[0].files: List should have at least 1 item"),
    ],
)
def test_mistakes_are_located_errors(
    tmp_path: Path, line: str, replacement: str, expected: str
) -> None:
    (found,) = problems(tmp_path, GOOD.replace(line, replacement))
    assert found.startswith(expected)


def test_a_missing_command_is_an_error(tmp_path: Path) -> None:
    text = "toolrun:\n  autoVerify:\n    - {name: x, files: ['*']}\n"
    (found,) = problems(tmp_path, text)
    assert "toolrun.autoVerify[0].command: missing required key 'command'" in found


def test_a_settings_file_wins_a_name_and_lists_merge(tmp_path: Path) -> None:
    (tmp_path / "toolrun.yaml").write_text(GOOD)
    settings = tmp_path / "ci.json"
    settings.write_text(
        '{"toolrun": {"autoVerify": [{"name": "ruff", "files": ["src/*.py"], "command": "ruff"}]}}'
    )
    verifiers = load_config(workspace=tmp_path, env={}, settings_files=[settings]).toolrun
    assert [(v.name, v.files) for v in verifiers.auto_verify] == [
        ("ruff", ("src/*.py",)), ("tsc", ("*.ts",))
    ]


def test_managed_hooks_only_keeps_only_managed_verifiers(tmp_path: Path) -> None:
    """A project's toolrun.yaml must not run commands after each edit where the managed
    policy allows only its own hooks."""
    (tmp_path / "toolrun.yaml").write_text(GOOD)
    policy = tmp_path / "etc" / "managed-settings.json"
    policy.parent.mkdir()
    policy.write_text(
        '{"allowManagedHooksOnly": true, "toolrun": {"autoVerify": '
        '[{"name": "audited", "files": ["*.py"], "command": "/opt/lint {files}"}]}}'
    )
    config = load_config(workspace=tmp_path, env={}, managed_settings=policy)
    assert [v.command for v in config.toolrun.auto_verify] == ["/opt/lint {files}"]
    assert any(
        "allowManagedHooksOnly" in note and "2 autoVerify verifiers" in note
        for note in config.policy_notes
    )
    policy.write_text('{"allowManagedHooksOnly": true}')
    assert load_config(workspace=tmp_path, env={}, managed_settings=policy).toolrun.auto_verify == ()
