"""Rule self-tests: ``toolrun.examples`` checked by validate and check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.config import load_config
from toolrun.errors import ConfigError
from toolrun.policy.examples import check_examples

RULES = """\
permissions:
  allow: ["Bash(git *)", Read]
  ask: ["Bash(git push *)"]
  deny: ["Read(./.env)", "Bash(rm *)"]
"""


def failures(tmp_path: Path, examples: str, extra: str = "") -> list[str]:
    (tmp_path / "toolrun.yaml").write_text(f"{RULES}toolrun:\n  examples:\n{examples}{extra}")
    config = load_config(workspace=tmp_path, env={})
    return [str(p) for p in check_examples(config)]


def test_examples_that_hold_are_silent(tmp_path: Path) -> None:
    assert not failures(
        tmp_path,
        "    - {call: 'Bash(git push origin main)', expect: ask}\n"
        "    - {call: 'Bash(git log)', expect: allow}\n"
        "    - {call: 'Read(.env)', expect: deny}\n"
        "    - {tool: Bash, input: {command: 'rm -rf build'}, expect: deny}\n"
        "    - {call: 'Bash(git commit -m x)', expect: deny, mode: plan}\n"
        "    - {call: WebFetch, expect: ask}\n",
    )


@pytest.mark.parametrize(
    ("example", "decided_by"),
    [
        ("{call: 'Bash(git push origin main)', expect: allow}", "rule Bash(git push *)"),
        ("{call: 'Bash(git log)', expect: ask}", "rule Bash(git *)"),
        ("{call: 'Read(./.env)', expect: allow}", "rule Read(./.env)"),
        ("{call: 'Bash(curl x)', expect: allow}", "nothing"),
    ],
)
def test_a_failing_example_is_located_and_names_what_decided(
    tmp_path: Path, example: str, decided_by: str
) -> None:
    [failure] = failures(tmp_path, f"    - {example}\n")
    assert "toolrun.yaml:7:7: toolrun.examples[0]: example " in failure
    assert f"decided by {decided_by}" in failure


def test_an_example_with_an_unknown_tool_is_an_error(tmp_path: Path) -> None:
    [failure] = failures(tmp_path, "    - {call: 'Reed(a)', expect: deny}\n")
    assert "unknown tool 'Reed'" in failure and "'Read'" in failure


def test_an_example_needs_one_call(tmp_path: Path) -> None:
    (tmp_path / "toolrun.yaml").write_text(
        "toolrun:\n  examples:\n    - {call: Read, tool: Read, expect: allow}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, env={})
    assert "toolrun.examples[0]" in str(info.value.problems[0])


def test_an_examples_file_is_checked_and_located(tmp_path: Path) -> None:
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "examples.yaml").write_text(
        "examples:\n  - {call: 'Bash(git status)', expect: allow}\n"
        "  - {call: 'Bash(rm -r x)', expect: ask}\n"
    )
    [failure] = failures(tmp_path, "    []\n", "  examplesFile: policy/examples.yaml\n")
    assert (
        "examples.yaml:3:5: examples[1]: example Bash(rm -r x): expected ask, got deny" in failure
    )


def test_validate_and_check_fail_on_a_failing_example(
    tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text(
        f"{RULES}toolrun:\n  examples:\n    - {{call: 'Bash(git push)', expect: allow}}\n"
    )
    (tmp_path / "plan.yaml").write_text("calls:\n  - {tool: Read, input: {file_path: a}}\n")
    validated = runner.invoke(main, ["validate", "plan.yaml"])
    assert validated.exit_code == 3
    assert "toolrun.examples[0]: example Bash(git push): expected allow" in validated.stderr
    checked = runner.invoke(main, ["check", "--format", "json", "plan.yaml"])
    assert checked.exit_code == 3 and "decided by rule Bash(git push *)" in checked.stderr
    (tmp_path / "toolrun.yaml").write_text(
        f"{RULES}toolrun:\n  examples:\n    - {{call: 'Bash(git push)', expect: ask}}\n"
    )
    checked = runner.invoke(main, ["check", "--format", "json", "plan.yaml"])
    assert checked.exit_code == 0 and json.loads(checked.stdout)["summary"]["allow"] == 1
