"""A Read/Edit pattern that cannot be matched is a located config problem, found by
`validate` as by every command that loads the config: nothing runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("Edit(a/*/../b)", "'Edit(a/*/../b)': '..' after a wildcard in a path pattern"),
        # a class cannot hold "/": git's wildmatch (pathspec) has no reading of it
        ("Read(a/[b/c]d)", "'Read(a/[b/c]d)': '[b/c]d' is not a pattern gitignore can match"),
        ("Edit(x[y)", "'Edit(x[y)': 'x[y': unclosed '[' in a path pattern"),
    ],
)
def test_validate_names_the_rule_that_cannot_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rule: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text(f"permissions:\n  deny:\n    - {json.dumps(rule)}\n")
    (tmp_path / "plan.json").write_text('{"calls": [{"tool": "Bash", "input": {"command": "touch ran"}}]}')
    for command in (["validate", "plan.json"], ["exec", "plan.json"]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 3
        assert f"toolrun.yaml:3:7: permissions.deny[0]: {message}" in result.stderr
    assert not (tmp_path / "ran").exists()
