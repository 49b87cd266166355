"""Run from a folder that was deleted: a clear message and an exit code, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolrun.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
ARGS = {
    "check": ["plan.yaml"], "exec": ["plan.yaml"], "validate": ["plan.yaml"], "show": ["last"],
    "explain-permission": ["Bash", "ls"], "completions": ["bash"], "schema": ["plan"],
}  # fmt: skip


def in_deleted_folder(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    return subprocess.run(
        ["bash", "-c", script, "bash", str(gone), sys.executable, "-m", "toolrun", *args],
        capture_output=True, text=True, input="{}", timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TOOLRUN_HOOK_SERVER": "off"},
        check=False,
    )  # fmt: skip


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_command_prints_a_traceback_in_a_deleted_folder(tmp_path: Path, command: str) -> None:
    done = in_deleted_folder(tmp_path, command, *ARGS.get(command, []))
    assert "Traceback" not in done.stderr, done.stderr
    if command in ("schema", "completions"):
        assert done.returncode == 0 and done.stdout  # they read nothing from the folder
    else:
        assert done.returncode == (1 if command == "hook" else 2)
        assert "the current directory no longer exists" in done.stderr


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["exec", "--help"]])
def test_help_still_answers_in_a_deleted_folder(tmp_path: Path, args: list[str]) -> None:
    done = in_deleted_folder(tmp_path, *args)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 2)
