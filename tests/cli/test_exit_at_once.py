"""`toolrun check` and `toolrun exec` end their process at once when their report is out
(``exit_now``), without the interpreter freeing every record first: nothing they print,
journal or run at exit is lost, and a thread the interpreter's exit would wait for is
still waited for."""

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


# the program as `python -m toolrun` runs it, noting whether it ended through os._exit (a
# file named first), and with a thread (named second: "daemon", "waited" or "none") that
# writes the file named third once the main thread has ended (never, if the process ends
# while the main thread runs; not a clock, which a loaded machine outruns)
EXIT_WATCH = """
import os, sys, threading, time
ended, kind, thread_note = sys.argv[1:4]
real_exit = os._exit
def noted_exit(code):
    with open(ended, "w") as f:
        f.write(str(code))
    real_exit(code)
os._exit = noted_exit
def late():
    while threading.main_thread().is_alive():
        time.sleep(0.01)
    with open(thread_note, "w") as f:
        f.write("done")
if kind != "none":
    threading.Thread(target=late, daemon=kind == "daemon").start()
sys.argv = ["toolrun", *sys.argv[4:]]
from toolrun.__main__ import run
run()
"""


def bash_plan(folder: Path) -> None:
    calls = [{"tool": "Bash", "input": {"command": f"echo line-{i}"}} for i in range(3)]
    (folder / "plan.json").write_text(json.dumps({"calls": calls}))


def run_watched(folder: Path, kind: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", EXIT_WATCH, str(folder / "ended"), kind, str(folder / "late"),
         *args],
        cwd=folder, env=ENV, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip


def test_exec_ends_its_process_without_freeing_it_and_loses_nothing(tmp_path: Path) -> None:
    bash_plan(tmp_path)
    done = run_watched(tmp_path, "daemon", "exec", "plan.json", "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["output"] for r in results] == [f"line-{i}\n" for i in range(3)]
    # the journal is closed whole before the process ends: its last record is the end
    (journal,) = (tmp_path / ".toolrun" / "runs").glob("*.jsonl")
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    assert records[-1]["event"] == "end" and sum(r["event"] == "result" for r in records) == 3
    # the process ended at once, the daemon thread with it (as the interpreter's exit
    # would have ended it)
    assert (tmp_path / "ended").read_text() == "0"
    assert not (tmp_path / "late").exists()


def test_a_command_that_does_not_end_at_once_takes_the_interpreters_exit(
    tmp_path: Path,
) -> None:
    bash_plan(tmp_path)
    done = run_watched(tmp_path, "none", "validate", "plan.json")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "ended").exists()


def test_exec_leaves_a_running_thread_to_the_interpreters_exit(tmp_path: Path) -> None:
    bash_plan(tmp_path)
    done = run_watched(tmp_path, "waited", "exec", "plan.json", "--format", "jsonl",
                       "--no-journal")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 3
    # not ended at once: the interpreter's exit waited for the thread, as it always does
    assert (tmp_path / "late").read_text() == "done"
    assert not (tmp_path / "ended").exists()
