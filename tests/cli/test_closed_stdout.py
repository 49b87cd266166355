"""A closed stdout (`toolrun check big.yaml | head -1`) is an interrupt: exit 130 and a line
on stderr, as exec has it, never a silent 1 or an "Exception ignored" traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def big_plan(folder: Path) -> Path:
    turns = "".join(
        "  - calls:\n" + "".join(
            f"      - {{tool: Read, input: {{file_path: f{t}-{i}.txt}}}}\n" for i in range(50)
        )
        for t in range(60)
    )  # fmt: skip
    plan = folder / "big.yaml"
    plan.write_text("turns:\n" + turns)
    return plan


def first_line_then_close(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run toolrun, read one line of its stdout, close the pipe: its exit code and stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLRUN_HOOK_SERVER": "off"}
    process = subprocess.Popen(
        [sys.executable, "-m", "toolrun", *args], cwd=cwd, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline()
    process.stdout.close()
    with process.stderr:
        err = process.stderr.read().decode()
    return process.wait(timeout=120), err


@pytest.mark.parametrize(
    "args",
    [
        ["check", "big.yaml", "--format", "text"],
        ["check", "big.yaml", "--format", "jsonl"],
        ["check", "big.yaml", "--format", "json"],
        ["check", "big.yaml", "--format", "table"],
        ["exec", "big.yaml", "--dry-run", "--format", "text"],
    ],
    ids=" ".join,
)
def test_a_closed_stdout_is_exit_130_with_a_message(tmp_path: Path, args: list[str]) -> None:
    big_plan(tmp_path)
    code, err = first_line_then_close(args, tmp_path)
    assert code == 130, err
    assert "Broken pipe" in err
    assert "Traceback" not in err and "Exception ignored" not in err


def test_show_of_a_long_run_into_a_closed_pipe(tmp_path: Path) -> None:
    big_plan(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "big.yaml", "--format", "json"],
        cwd=tmp_path, env=env, capture_output=True, check=False,
    )  # fmt: skip
    code, err = first_line_then_close(["show", "last"], tmp_path)
    assert code == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err
