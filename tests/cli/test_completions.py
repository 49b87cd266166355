from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.cli.completions import SHELLS, completion_script

ROOT = Path(__file__).resolve().parents[2]
FILES = {"bash": "toolrun.bash", "zsh": "_toolrun", "fish": "toolrun.fish"}


@pytest.mark.parametrize("shell", SHELLS)
def test_committed_scripts_match_what_click_generates(shell: str) -> None:
    committed = (ROOT / "completions" / FILES[shell]).read_text()
    assert committed == completion_script(shell), (
        "completions/ is stale: run `.venv/bin/python scripts/regenerate.py`"
    )


@pytest.mark.parametrize("shell", SHELLS)
def test_completions_command_prints_the_script(runner: CliRunner, shell: str) -> None:
    result = runner.invoke(main, ["completions", shell])
    assert result.exit_code == 0
    assert result.stdout == completion_script(shell)
    assert "_TOOLRUN_COMPLETE" in result.stdout


def test_the_script_matches_the_env_var_protocol(runner: CliRunner) -> None:
    result = runner.invoke(main, [], env={"_TOOLRUN_COMPLETE": "bash_source"}, prog_name="toolrun")
    assert result.stdout.strip() == completion_script("bash").strip()


def test_unknown_shell_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(main, ["completions", "tcsh"])
    assert result.exit_code == 2
    assert "'tcsh' is not one of 'bash', 'zsh', 'fish'" in result.stderr


def test_tab_completes_command_names(runner: CliRunner) -> None:
    result = runner.invoke(
        main,
        [],
        env={"_TOOLRUN_COMPLETE": "bash_complete", "COMP_WORDS": "toolrun va", "COMP_CWORD": "1"},
        prog_name="toolrun",
    )
    assert result.stdout.split() == ["plain,validate"]
