"""`toolrun check` ends its process at once when its report is out (``exit_now``), without
the interpreter freeing every record first: nothing it prints or runs at exit is lost."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# the program as `python -m toolrun` runs it, with an atexit handler of the test's: it
# writes to the file named first (and, told so, waits for the file named second, then
# writes to stdout without flushing it)
WRAPPER = """
import atexit, os, sys, time
note, wait = sys.argv[1:3]
def at_exit():
    with open(note, "w") as f:
        f.write("ran")
    if wait:
        while not os.path.exists(wait):
            time.sleep(0.01)
        sys.stdout.write("one more line")
atexit.register(at_exit)
sys.argv = ["toolrun", *sys.argv[3:]]
from toolrun.__main__ import run
run()
"""


def plan(folder: Path, calls: int = 3000) -> Path:
    (folder / "toolrun.yaml").write_text(
        json.dumps({"permissions": {"deny": ["Read(./secret*)"]}}) + "\n"
    )
    names = [f"secret{i}" if i % 100 == 0 else f"f{i}.txt" for i in range(calls)]
    turns = [{"calls": [{"tool": "Read", "input": {"file_path": n}} for n in names[t : t + 10]]}
             for t in range(0, calls, 10)]  # fmt: skip
    path = folder / "plan.json"
    path.write_text(json.dumps({"turns": turns}))
    return path


def masked(text: str) -> str:
    return re.sub(r"\b\d+(\.\d+)? ?(ms|s)\b", "T", text)


def test_every_byte_of_a_report_bigger_than_a_pipe_and_the_exit_code(tmp_path: Path) -> None:
    plan(tmp_path)
    args = [sys.executable, "-m", "toolrun", "check", "plan.json", "--format", "text"]
    into_file = tmp_path / "out.txt"
    with into_file.open("w") as out:
        done = subprocess.run(args, cwd=tmp_path, env=ENV, stdout=out, check=False)
    assert done.returncode == 4
    piped = subprocess.Popen(args, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE)
    time.sleep(0.5)  # (the pipe fills: the check waits to write the rest)
    got, _ = piped.communicate(timeout=120)
    assert piped.returncode == 4
    assert len(got) > 1 << 16
    assert masked(got.decode()) == masked(into_file.read_text())
    assert got.decode().splitlines()[-1].startswith("1 input, 3000 calls:")


def test_atexit_handlers_run_and_a_last_flush_that_fails_is_reported(tmp_path: Path) -> None:
    plan(tmp_path, 30)
    note, told = tmp_path / "note", tmp_path / "told"
    args = [sys.executable, "-c", WRAPPER, str(note), "", "check", "plan.json"]
    done = subprocess.run(args, cwd=tmp_path, env=ENV, capture_output=True, check=False)
    assert done.returncode == 4 and note.read_text() == "ran"
    # what a handler leaves in stdout's buffer is flushed at exit; when that fails (the
    # reader is gone), the interpreter says so and exits 120, as it does for any program
    note.unlink()
    args[4] = str(told)
    buffered = {k: v for k, v in ENV.items() if k != "PYTHONUNBUFFERED"}
    with subprocess.Popen(args, cwd=tmp_path, env=buffered, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:  # fmt: skip
        assert proc.stdout is not None and proc.stderr is not None
        try:
            while not proc.stdout.readline().startswith(b"1 input, 30 calls"):  # its last line
                pass
            proc.stdout.close()
        finally:
            told.touch()
        err = proc.stderr.read().decode()
    assert proc.returncode == 120, err
    assert "BrokenPipeError" in err and note.read_text() == "ran"
