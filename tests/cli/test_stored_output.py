"""Whole outputs beside the journal: real `toolrun exec` runs of Bash calls that print
megabytes, then `toolrun show --full`, `runs prune` and a look at the disk."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from toolrun.commands.runs import list_runs

MB = 1024 * 1024
HEAD, TAIL = b"FIRST LINE\n", b"\nLAST LINE\n"


def toolrun(ws: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "toolrun", *args], cwd=ws, capture_output=True, check=False
    )


def big_file(path: Path, size: int, seed: int = 0) -> bytes:
    """HEAD, then ``size`` bytes of anything (not UTF-8 included), then TAIL."""
    body = hashlib.shake_256(f"{seed}".encode()).digest(size)
    data = HEAD + body + TAIL
    path.write_bytes(data)
    return data


def write_plan(ws: Path, calls: str) -> None:
    (ws / "plan.yaml").write_text("calls:\n" + calls)


def results(proc: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in proc.stdout.splitlines()]


def journal_results(ws: Path) -> list[dict[str, Any]]:
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    # bytes: str.splitlines() would also cut at U+2028 and the like inside outputs
    records = [json.loads(line) for line in journal.read_bytes().splitlines()]
    return [r for r in records if r["event"] == "result"]


def run_dir(ws: Path) -> Path:
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    return journal.with_suffix("")


@pytest.fixture(scope="module")
def done(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """One run: a Bash call that printed 3 MB (cat of a file), journal on."""
    ws = tmp_path_factory.mktemp("ws")
    data = big_file(ws / "data.bin", 3 * MB)
    write_plan(ws, "  - {id: big, tool: Bash, input: {command: cat data.bin}}\n")
    proc = toolrun(ws, "exec", "plan.yaml", "--format", "jsonl")
    assert proc.returncode == 0, proc.stderr
    return ws, data


@pytest.fixture
def ws(done: tuple[Path, bytes], tmp_path: Path) -> Path:
    """A copy of that run's workspace, to alter freely."""
    copy = tmp_path / "ws"
    shutil.copytree(done[0], copy, symlinks=True)
    return copy


def test_the_display_keeps_head_and_tail_and_the_file_keeps_everything(
    done: tuple[Path, bytes],
) -> None:
    ws, data = done
    (result,) = journal_results(ws)
    stored = result["metadata"]["stored_output"]
    # the journal line holds the trimmed text: the head and the tail are there
    assert result["output"].startswith(HEAD.decode())
    assert result["output"].endswith(TAIL.decode())
    assert len(result["output"]) < 5 * MB
    assert "bytes of output omitted; all of it is stored: toolrun show" in result["output"]
    assert stored["path"] == f"{result['execution_id']}.out"
    assert stored["bytes"] == stored["output_bytes"] == len(data)
    assert stored["truncated_at"] is None
    assert stored["sha256"] == hashlib.sha256(data).hexdigest()
    assert (run_dir(ws) / stored["path"]).read_bytes() == data
    assert [p.name for p in run_dir(ws).iterdir()] == [stored["path"]]  # no .part left


def test_show_full_gives_back_the_output_byte_for_byte(done: tuple[Path, bytes]) -> None:
    ws, data = done
    shown = toolrun(ws, "show", "last", "big", "--full")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == data
    (result,) = journal_results(ws)
    by_execution = toolrun(ws, "show", "last", result["execution_id"][:12], "--full")
    assert by_execution.stdout == data


def test_show_of_one_call_names_the_stored_file(done: tuple[Path, bytes]) -> None:
    ws, data = done
    (result,) = journal_results(ws)
    shown = toolrun(ws, "show", "last", "big").stdout.decode()
    stored = result["metadata"]["stored_output"]
    assert f"stored:    {stored['path']} ({len(data)} bytes, sha256 {stored['sha256']})" in shown


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def cut_short(path: Path) -> None:
    with path.open("r+b") as fh:
        fh.truncate(1000)


def link_to_a_copy(path: Path) -> None:
    """The same bytes, behind a symlink: still not the file toolrun wrote."""
    copy = path.with_name("elsewhere")
    os.rename(path, copy)
    path.symlink_to(copy)


def make_a_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


@pytest.mark.parametrize(
    ("alter", "says"),
    [
        (flip_a_byte, "the stored output was altered: its sha256 is not"),
        (cut_short, "the stored output was altered: it holds 1000 bytes"),
        (Path.unlink, "the stored output is missing"),
        (link_to_a_copy, "a symbolic link, not a file"),
        (make_a_fifo, "not a regular file"),
    ],
)
def test_an_altered_or_missing_stored_file_is_an_error_naming_it(
    ws: Path, alter: Any, says: str
) -> None:
    (result,) = journal_results(ws)
    path = run_dir(ws) / result["metadata"]["stored_output"]["path"]
    alter(path)
    shown = toolrun(ws, "show", "last", "big", "--full")
    assert shown.returncode == 1
    assert shown.stdout == b""  # nothing of an altered file is shown
    assert str(path) in shown.stderr.decode()
    assert says in shown.stderr.decode()


@pytest.mark.parametrize(
    "path", ["../../../secret.out", "/etc/passwd", "sub/x.out", "..", ".hidden.out", "x.txt"]
)
def test_a_journal_record_cannot_point_outside_the_runs_folder(ws: Path, path: str) -> None:
    (ws / "secret.out").write_text("not yours\n")
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    lines = journal.read_bytes().splitlines()
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record["event"] == "result":
            record["metadata"]["stored_output"]["path"] = path
            lines[i] = json.dumps(record).encode()
    journal.write_bytes(b"\n".join(lines) + b"\n")
    shown = toolrun(ws, "show", "last", "big", "--full")
    assert shown.returncode == 1
    assert shown.stdout == b""
    assert "is not a file name in the run's folder" in shown.stderr.decode()


def test_a_runs_folder_that_is_a_link_is_refused(ws: Path, tmp_path: Path) -> None:
    folder = run_dir(ws)
    moved = shutil.move(folder, tmp_path / "moved")
    folder.symlink_to(moved)
    shown = toolrun(ws, "show", "last", "big", "--full")
    assert shown.returncode == 1 and "is a symbolic link" in shown.stderr.decode()


def test_full_needs_a_call_and_shows_a_short_output_from_the_journal(ws: Path) -> None:
    assert toolrun(ws, "show", "last", "--full").returncode == 2
    write_plan(ws, "  - {id: small, tool: Bash, input: {command: 'printf \"a\\nb\"'}}\n")
    assert toolrun(ws, "exec", "plan.yaml").returncode == 0
    shown = toolrun(ws, "show", "last", "small", "--full")
    assert (shown.returncode, shown.stdout) == (0, b"a\nb")


def test_the_cap_is_kept_and_stated(tmp_path: Path) -> None:
    data = big_file(tmp_path / "data.bin", 3 * MB)
    (tmp_path / "toolrun.yaml").write_text("toolrun:\n  maxStoredOutput: 1500kB\n")
    write_plan(tmp_path, "  - {id: big, tool: Bash, input: {command: cat data.bin}}\n")
    (result,) = results(toolrun(tmp_path, "exec", "plan.yaml", "--format", "jsonl"))
    stored = result["metadata"]["stored_output"]
    assert stored["truncated_at"] == stored["bytes"] == 1_500_000
    assert stored["output_bytes"] == len(data)
    assert "the first part is stored: toolrun show" in result["output"]
    shown = toolrun(tmp_path, "show", "last", "big", "--full")
    assert shown.returncode == 0
    assert shown.stdout == data[:1_500_000]
    assert (
        f"the call printed {len(data)} bytes; only the first 1.4 MiB are stored "
        "(toolrun.maxStoredOutput)" in shown.stderr.decode()
    )
    assert "cut at 1500000 bytes (toolrun.maxStoredOutput)" in toolrun(
        tmp_path, "show", "last", "big"
    ).stdout.decode()


def test_a_cap_of_zero_stores_nothing_and_full_says_so(tmp_path: Path) -> None:
    big_file(tmp_path / "data.bin", 2 * MB)
    (tmp_path / "toolrun.yaml").write_text("toolrun:\n  maxStoredOutput: 0\n")
    write_plan(tmp_path, "  - {id: big, tool: Bash, input: {command: cat data.bin}}\n")
    (result,) = results(toolrun(tmp_path, "exec", "plan.yaml", "--format", "jsonl"))
    assert "stored_output" not in result["metadata"]
    assert "maxStoredOutput is 0" in result["metadata"]["stored_output_error"]
    assert not run_dir(tmp_path).exists()
    shown = toolrun(tmp_path, "show", "last", "big", "--full")
    assert shown.returncode == 1 and "maxStoredOutput is 0" in shown.stderr.decode()
    call = toolrun(tmp_path, "show", "last", "big").stdout.decode()
    assert "stored:    not stored: toolrun.maxStoredOutput is 0" in call


@pytest.mark.parametrize(
    "call",
    [
        # Bash's own timeout (ms)
        "{id: big, tool: Bash, input: {command: 'cat data.bin; sleep 30', timeout: 1500}}",
        # the plan's timeout for the call (s)
        "{id: big, tool: Bash, input: {command: 'cat data.bin; sleep 30'}, timeout: 1.5}",
    ],
)
def test_a_call_killed_on_timeout_still_stores_what_it_printed(tmp_path: Path, call: str) -> None:
    data = big_file(tmp_path / "data.bin", 2 * MB)
    write_plan(tmp_path, f"  - {call}\n")
    proc = toolrun(tmp_path, "exec", "plan.yaml", "--format", "jsonl")
    (result,) = results(proc)
    assert result["status"] == "timeout"
    stored = result["metadata"]["stored_output"]
    assert stored["bytes"] == len(data)
    assert toolrun(tmp_path, "show", "last", "big", "--full").stdout == data


def test_concurrent_calls_each_store_their_own(tmp_path: Path) -> None:
    one = big_file(tmp_path / "one.bin", 2 * MB, seed=1)
    two = big_file(tmp_path / "two.bin", 2 * MB, seed=2)
    write_plan(
        tmp_path,
        "  - {id: one, tool: Bash, input: {command: cat one.bin}}\n"
        "  - {id: two, tool: Bash, input: {command: cat two.bin}}\n",
    )
    assert toolrun(tmp_path, "exec", "plan.yaml").returncode == 0
    assert toolrun(tmp_path, "show", "last", "one", "--full").stdout == one
    assert toolrun(tmp_path, "show", "last", "two", "--full").stdout == two
    assert len(list(run_dir(tmp_path).iterdir())) == 2


def test_without_the_journal_nothing_is_stored_and_the_display_is_trimmed(
    tmp_path: Path,
) -> None:
    big_file(tmp_path / "data.bin", 2 * MB)
    write_plan(tmp_path, "  - {id: big, tool: Bash, input: {command: cat data.bin}}\n")
    proc = toolrun(tmp_path, "exec", "plan.yaml", "--no-journal", "--format", "jsonl")
    (result,) = results(proc)
    assert result["output"].startswith(HEAD.decode())
    assert result["output"].endswith(TAIL.decode())
    assert "bytes of output omitted ...]" in result["output"]
    assert "stored_output" not in result["metadata"]
    assert not (tmp_path / ".toolrun").exists()


def test_an_output_within_the_display_is_not_stored(tmp_path: Path) -> None:
    big_file(tmp_path / "data.bin", MB - 100)  # head and tail hold it all
    write_plan(tmp_path, "  - {id: big, tool: Bash, input: {command: cat data.bin}}\n")
    (result,) = results(toolrun(tmp_path, "exec", "plan.yaml", "--format", "jsonl"))
    assert "omitted" not in result["output"]
    assert "stored_output" not in result["metadata"]
    assert not run_dir(tmp_path).exists()


def two_runs(ws: Path) -> tuple[Path, Path]:
    """Run the big call twice: the folders of the older and the newer run."""
    big_file(ws / "data.bin", 2 * MB)
    write_plan(ws, "  - {id: big, tool: Bash, input: {command: cat data.bin}}\n")
    for _ in range(2):
        assert toolrun(ws, "exec", "plan.yaml").returncode == 0
    new, old = (run.path.with_suffix("") for run in list_runs(ws))
    return old, new


def test_prune_removes_the_stored_outputs_with_their_run(tmp_path: Path) -> None:
    old, new = two_runs(tmp_path)
    assert old.is_dir() and new.is_dir()
    dry = toolrun(tmp_path, "runs", "prune", "--keep", "1", "--dry-run")
    assert dry.returncode == 0 and old.is_dir()
    pruned = toolrun(tmp_path, "runs", "prune", "--keep", "1")
    assert pruned.returncode == 0, pruned.stderr
    assert not old.exists() and not old.with_suffix(".jsonl").exists()
    assert new.is_dir() and toolrun(tmp_path, "show", "last", "big", "--full").returncode == 0


def test_prune_removes_a_linked_runs_folder_not_what_it_points_to(tmp_path: Path) -> None:
    old, _ = two_runs(tmp_path)
    keep = tmp_path / "keep-me"
    shutil.move(old, keep)
    old.symlink_to(keep)
    assert toolrun(tmp_path, "runs", "prune", "--keep", "1").returncode == 0
    assert not old.is_symlink() and not old.exists()
    assert len(list(keep.iterdir())) == 1


def test_a_call_cut_short_by_a_killed_toolrun_shows_no_unchecked_output(tmp_path: Path) -> None:
    big_file(tmp_path / "data.bin", 2 * MB)
    write_plan(tmp_path, "  - {id: big, tool: Bash, input: {command: 'cat data.bin; sleep 60'}}\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolrun", "exec", "plan.yaml"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not list(tmp_path.glob(".toolrun/runs/*/*.out.part")):
            assert time.monotonic() < deadline, "the call never started spilling"
            time.sleep(0.05)
        # all 2 MB are in the .part once its size stops at the file's
        while next(tmp_path.glob(".toolrun/runs/*/*.out.part")).stat().st_size < 2 * MB:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    shown = toolrun(tmp_path, "show", "last", "big", "--full")
    assert shown.returncode == 1 and shown.stdout == b""
    assert "started and has no result: no output was recorded" in shown.stderr.decode()
    assert ".out.part (unchecked)" in shown.stderr.decode()
