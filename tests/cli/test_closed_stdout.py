"""A closed stdout (`toolrun check big.yaml | head -1`) is an interrupt: exit 130 and a line
on stderr, as exec has it, never a silent 1 or an "Exception ignored" traceback."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def first_line_then_close(
    args: list[str], cwd: Path, extra_env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run toolrun, read one line of its stdout, close the pipe: its exit code and stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLRUN_HOOK_SERVER": "off", **(extra_env or {})}
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


@pytest.mark.parametrize("unbuffered", ["1", ""], ids=["unbuffered", "buffered"])
def test_exec_into_a_closed_pipe_with_stdout_unbuffered_or_not(
    tmp_path: Path, unbuffered: str
) -> None:
    """A tick's lines go out in one write: unbuffered (PYTHONUNBUFFERED), one cut short
    by the reader's close is not the end of it, the write of the rest fails."""
    big_plan(tmp_path)
    args = ["exec", "big.yaml", "--dry-run", "--format", "jsonl"]
    code, err = first_line_then_close(args, tmp_path, {"PYTHONUNBUFFERED": unbuffered})
    assert code == 130, err
    assert "Broken pipe" in err


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


def test_a_tick_written_unbuffered_goes_out_to_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """One write of a tick's lines on an unbuffered stdout: a write the pipe takes in part
    is followed by more, until every byte is out (then one that fails says so)."""
    from toolrun.cli.exec import _write_out

    class Trickle(io.RawIOBase):
        def __init__(self) -> None:
            self.got = bytearray()
            self.writes = 0

        def writable(self) -> bool:
            return True

        def write(self, data: Any) -> int:
            self.writes += 1
            taken = bytes(memoryview(data)[:7])
            self.got += taken
            return len(taken)

    raw = Trickle()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="utf-8", write_through=True))
    _write_out("é first line\nsecond line\n")
    assert raw.got.decode() == "é first line\nsecond line\n"
    assert raw.writes > 1
