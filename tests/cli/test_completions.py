from __future__ import annotations

import subprocess
import sys
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


def complete(runner: CliRunner, line: str) -> list[str]:
    """What TAB offers after ``line`` (a trailing space: a new word)."""
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    result = runner.invoke(
        main,
        [],
        env={"_TOOLRUN_COMPLETE": "bash_complete", "COMP_WORDS": line, "COMP_CWORD": str(cword)},
        prog_name="toolrun",
    )
    return [item.split(",", 1)[1] for item in result.stdout.split()]


@pytest.fixture
def two_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """Two real runs in a workspace: one plan, then two plans that share call ids."""
    (tmp_path / "a.yaml").write_text(
        "calls:\n  - {tool: LS, input: {path: .}}\n  - {id: look, tool: Glob, input: {pattern: '*.yaml'}}\n"
    )
    (tmp_path / "b.yaml").write_text("calls:\n  - {tool: LS, input: {path: .}}\n")
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / ".toolrun" / "runs"
    ids = []
    for plans in (["a.yaml"], ["a.yaml", "b.yaml"]):
        subprocess.run(
            [sys.executable, "-m", "toolrun", "exec", *plans], check=True, capture_output=True
        )
        ids.append(max(runs.glob("*.jsonl"), key=lambda p: p.stat().st_mtime).stem)
    return ids[0], ids[1]


def test_tab_after_show_offers_last_and_the_run_ids(
    runner: CliRunner, two_runs: tuple[str, str]
) -> None:
    first, second = two_runs
    assert complete(runner, "toolrun show ") == ["last", second, first]
    assert complete(runner, f"toolrun show {first[:-2]}") == [first]


def test_tab_after_a_run_offers_its_call_ids(runner: CliRunner, two_runs: tuple[str, str]) -> None:
    first, _ = two_runs
    assert complete(runner, f"toolrun show {first} ") == ["call-1", "look"]
    assert complete(runner, f"toolrun show {first} l") == ["look"]
    # several plans: the names `show` takes, PLAN:ID
    assert complete(runner, "toolrun show last ") == [
        "a.yaml:call-1",
        "a.yaml:look",
        "b.yaml:call-1",
    ]
    assert complete(runner, "toolrun show nosuchrun ") == []


def test_tab_completes_tool_names(runner: CliRunner) -> None:
    assert complete(runner, "toolrun tools --schema Mu") == ["MultiEdit"]
    assert "Bash" in complete(runner, "toolrun tools --schema ")
    assert complete(runner, "toolrun explain-permission Web") == ["WebFetch"]


def test_tab_in_a_folder_without_runs_offers_only_last(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert complete(runner, "toolrun show ") == ["last"]
