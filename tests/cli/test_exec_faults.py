"""Output faults lose nothing: bytes that are not UTF-8, a closed stdout, a full disk,
a read-only journal folder. Real toolrun processes, real file systems (a tmpfs mounted
for the test when we are root), then a look at the disk."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.processes import journal_records, spawn

ALLOW = "permissions:\n  allow: [Bash, Write]\n"


def toolrun(ws: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "toolrun", *args, "--workspace", str(ws)],
        cwd=ws,
        capture_output=True,
        input=stdin.encode() if stdin is not None else None,
        timeout=120,
        check=False,
    )


def plan(ws: Path, *commands: str, turns: bool = True) -> Path:
    """A plan of Bash calls, one turn each (or one turn of them all)."""
    quoted = [json.dumps({"tool": "Bash", "input": {"command": c}}) for c in commands]
    if turns:
        text = "turns:\n" + "".join(f"  - calls: [{q}]\n" for q in quoted)
    else:
        text = "calls:\n" + "".join(f"  - {q}\n" for q in quoted)
    (ws / "toolrun.yaml").write_text(ALLOW)
    path = ws / "plan.yaml"
    path.write_text(text)
    return path


def wait_for(name: str, script: Path) -> None:
    """A script that returns once the file ``name`` exists: calls wait on the test's events."""
    script.write_text(f"#!/bin/sh\nwhile [ ! -e {name} ]; do sleep 0.01; done\n")
    script.chmod(0o755)


@contextlib.contextmanager
def tmpfs(where: Path, options: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_names_and_output_that_are_not_utf8_are_escaped_in_results_journal_and_stdout(
    tmp_path: Path,
) -> None:
    (tmp_path / "d\udcff").mkdir()  # the byte 0xff, as Python names it
    plan(tmp_path, "cd d*", "pwd", "printf 'x\\376y'", "echo four")
    done = toolrun(tmp_path, "exec", "plan.yaml", "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    results = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    assert [r["status"] for r in results] == ["ok"] * 4
    # a JSON `\udcff` escape reads back to the very name the directory has
    assert results[0]["metadata"]["cwd"] == str(tmp_path / "d\udcff")
    assert results[1]["output"].strip().endswith("d\\xff")  # a program's bytes: backslashed
    assert results[2]["output"] == "x\\xfey"
    journalled = [r for r in journal_records(tmp_path) if r["event"] == "result"]
    assert [r["output"] for r in journalled] == [r["output"] for r in results]
    end = journal_records(tmp_path)[-1]
    assert end["event"] == "end" and end["interrupted"] is False


@pytest.mark.parametrize("fmt", ["text", "table", "json"])
def test_text_formats_escape_too(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "d\udcff").mkdir()
    # the third call's error names the working directory that the second one removed
    # (a script, not `python -c`: code given as a string is not analysable, so it asks)
    script = tmp_path / "rmcwd.py"
    script.write_text("import os\nos.rmdir(os.getcwd())\n")
    remove_cwd = f"{sys.executable} {script}"
    plan(tmp_path, "cd d*", remove_cwd, "echo hi")
    done = toolrun(tmp_path, "exec", "plan.yaml", "--format", fmt)
    assert done.returncode == 1, done.stderr
    assert b"Traceback" not in done.stderr
    text = done.stdout.decode("utf-8")  # no raw surrogate, no lone 0xff byte
    if fmt != "table":  # the table cuts the note short
        assert "d\\udcff does not exist" in text.replace("\\\\", "\\")


def test_a_closed_stdout_interrupts_the_rest_and_the_journal_keeps_everything(
    tmp_path: Path,
) -> None:
    # call 2 waits for `go`, which the test creates only after closing its end of the pipe
    wait_for("go", tmp_path / "wait.sh")
    plan(
        tmp_path,
        "echo one",
        "./wait.sh; echo two",
        "touch ran3",
        "touch ran4",
    )
    proc = spawn(tmp_path, "exec", "plan.yaml", "--format", "jsonl")
    with proc:
        assert proc.stdout is not None and proc.stderr is not None
        first = json.loads(proc.stdout.readline())
        assert first["status"] == "ok"
        proc.stdout.close()  # like `| head -1`
        (tmp_path / "go").touch()
        stderr = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 130
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr
    assert "Broken pipe" in stderr and ".toolrun/runs/" in stderr
    assert not (tmp_path / "ran3").exists() and not (tmp_path / "ran4").exists()
    records = journal_records(tmp_path)
    results = [r for r in records if r["event"] == "result"]
    assert [r["status"] for r in results] == ["ok", "ok", "interrupted", "interrupted"]
    assert records[-1]["interrupted"] is True
    assert "Broken pipe" in str(records[-1]["output_error"])


def test_a_read_only_journal_folder_is_exit_3_before_anything_runs(tmp_path: Path) -> None:
    plan(tmp_path, "touch ran")
    with tmpfs(tmp_path / ".toolrun", "ro"):
        done = toolrun(tmp_path, "exec", "plan.yaml")
    assert done.returncode == 3
    stderr = done.stderr.decode()
    assert "Traceback" not in stderr
    assert "cannot create the journal" in stderr and str(tmp_path / ".toolrun") in stderr
    assert "Read-only file system" in stderr
    assert not (tmp_path / "ran").exists()
    assert done.stdout == b""


def test_a_journal_on_a_full_disk_is_exit_3_before_anything_runs(tmp_path: Path) -> None:
    plan(tmp_path, "touch ran")
    with tmpfs(tmp_path / ".toolrun", "size=4k") as folder:
        (folder / "filler").write_bytes(b"x" * 4096)
        done = toolrun(tmp_path, "exec", "plan.yaml")
        left = list((folder / "runs").glob("*.jsonl"))
    assert done.returncode == 3, done.stderr
    assert "No space left on device" in done.stderr.decode()
    assert "Traceback" not in done.stderr.decode()
    assert not (tmp_path / "ran").exists()
    assert left == []  # no empty journal left behind


def test_a_disk_that_fills_up_mid_run_loses_no_result_on_stdout(tmp_path: Path) -> None:
    count = 20
    plan(tmp_path, *(f"echo {i}; printf 'x%.0s' $(seq 300)" for i in range(count)))
    with tmpfs(tmp_path / ".toolrun", "size=8k"):
        done = toolrun(tmp_path, "exec", "plan.yaml", "--format", "jsonl")
        runs = toolrun(tmp_path, "runs", "--format", "json")
    stderr = done.stderr.decode()
    assert "Traceback" not in stderr
    assert done.returncode == 1
    assert "No space left on device" in stderr and ".toolrun/runs/" in stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["status"] for r in results] == ["ok"] * count
    (row,) = json.loads(runs.stdout)
    assert row["finished"] is False
    # the write that hit the full disk usually leaves part of its record: `runs` sees
    # exactly what the writer reported
    assert row["torn"] is ("its last record is torn" in stderr)


def test_a_report_file_that_cannot_be_written_is_reported_not_a_traceback(
    tmp_path: Path,
) -> None:
    plan(tmp_path, "echo one")
    # -o takes its report from the name's suffix: a report name that leads to /dev/full
    (tmp_path / "full.json").symlink_to("/dev/full")
    done = toolrun(tmp_path, "exec", "plan.yaml", "--format", "jsonl", "-o", "full.json")
    stderr = done.stderr.decode()
    assert done.returncode == 1
    assert "Traceback" not in stderr
    assert "cannot write full.json: No space left on device" in stderr
    assert json.loads(done.stdout)["status"] == "ok"


def test_hooks_get_names_that_are_not_utf8_escaped(tmp_path: Path) -> None:
    """Glob, Grep and ls list a file whose name is not UTF-8; a PostToolUse hook sees it."""
    (tmp_path / "d\udcff").mkdir()
    (tmp_path / "d\udcff" / "f\udcfe.txt").write_text("x\n")
    seen = tmp_path.parent / f"{tmp_path.name}-seen"
    seen.mkdir()
    # the three calls run side by side: each hook writes a file of its own
    (tmp_path / "toolrun.yaml").write_text(
        "permissions:\n  allow: [Bash, Glob, Grep]\nhooks:\n  PostToolUse:\n"
        f"    - hooks: [{{type: command, command: 'cat > {seen}/$$.json'}}]\n"
    )
    (tmp_path / "plan.yaml").write_text(
        "calls:\n  - {tool: Glob, input: {pattern: '**/*.txt'}}\n"
        "  - {tool: Grep, input: {pattern: x, path: .}}\n"
        "  - {tool: Bash, input: {command: 'ls d*'}}\n"
    )
    done = toolrun(tmp_path, "exec", "plan.yaml", "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    assert [r["status"] for r in results] == ["ok"] * 3
    assert "f\udcfe.txt" in results[0]["output"]  # reads back to the very name
    payloads = [json.loads(f.read_bytes().decode("utf-8")) for f in seen.iterdir()]
    assert len(payloads) == 3
