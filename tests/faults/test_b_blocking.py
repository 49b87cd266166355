"""No blocking file or CPU work on the event loop (#27 items 6 and 12): a Read of a FIFO,
and the Python Grep engine on a catastrophic pattern, honour the call's timeout, Ctrl-C,
SIGTERM and SIGHUP, and a concurrent Bash call still gets its result. The Python engine
streams files: a 4 GB sparse file costs a chunk, not 4 GB. Real FIFOs, a real
``python -m toolrun`` without ripgrep on its PATH, real signals, a real RLIMIT_AS."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.faults.b_support import (
    BOUND_S,
    left_running,
    nothing_left,
    run,
    signalled,
    without_ripgrep,
)

ALLOW = {"permissions": {"allow": ["Read", "Edit", "Grep", "Bash"]}}
BASH = {"tool": "Bash", "input": {"command": "echo still-here"}}


def _plan(ws: Path, first: dict[str, Any], timeout: float | None = None) -> None:
    (ws / "toolrun.yaml").write_text(json.dumps(ALLOW))
    if timeout is not None:
        first = {**first, "timeout": timeout}
    (ws / "plan.json").write_text(json.dumps({"calls": [first, BASH]}))


# ------------------------------------------------------------------ FIFOs


def _fifo(ws: Path) -> dict[str, Any]:  # nobody writes: an open would wait for ever
    os.mkfifo(ws / "pipe")
    return {"tool": "Read", "input": {"file_path": "pipe"}}


def _fifo_held(ws: Path) -> dict[str, Any]:  # a writer that never writes: a read waits
    os.mkfifo(ws / "pipe")
    fd = os.open(ws / "pipe", os.O_RDWR)  # kept open for the test's life
    (ws / ".held").write_text(str(fd))
    return {"tool": "Read", "input": {"file_path": "pipe"}}


def _fifo_link(ws: Path) -> dict[str, Any]:
    os.mkfifo(ws / "pipe")
    (ws / "notes.txt").symlink_to("pipe")
    return {"tool": "Read", "input": {"file_path": "notes.txt"}}


def _fifo_edit(ws: Path) -> dict[str, Any]:  # the write tools read it too
    os.mkfifo(ws / "pipe")
    return {"tool": "Edit", "input": {"file_path": "pipe", "old_string": "a", "new_string": "b"}}


def _fifo_grep(ws: Path) -> dict[str, Any]:
    os.mkfifo(ws / "pipe")
    return {"tool": "Grep", "input": {"pattern": "x", "path": "pipe"}}


@pytest.mark.parametrize("first", [_fifo, _fifo_held, _fifo_link, _fifo_edit, _fifo_grep])
def test_a_fifo_is_refused_at_once_and_the_run_goes_on(tmp_path: Path, first: Any) -> None:
    _plan(tmp_path, first(tmp_path), timeout=30)
    ended = run(tmp_path, "exec", "plan.json", "--format", "jsonl",
                env=without_ripgrep(tmp_path / "bin"))
    assert ended.statuses() == ["error", "ok"], ended.stderr
    assert "is not a regular file (a FIFO)" in ended.results[0]["error"]
    assert "still-here" in ended.results[1]["output"]
    assert ended.seconds < BOUND_S  # never waited for its timeout
    assert not nothing_left(tmp_path)


# ------------------------------------------------------------------ catastrophic regexes

#: Four spellings of exponential backtracking in Python's re on a line of 50 'a's.
CATASTROPHIC = ["(a+)+$", "(a*)*b", "(a|a?)+$", "^(a+)+x"]


def _catastrophe(ws: Path, pattern: str) -> dict[str, Any]:
    (ws / "src").mkdir()
    (ws / "src" / "line.txt").write_text("a" * 50 + "!\n")
    return {"tool": "Grep", "input": {"pattern": pattern, "path": "src", "output_mode": "content"}}


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_a_catastrophic_pattern_ends_at_the_timeout(tmp_path: Path, pattern: str) -> None:
    _plan(tmp_path, _catastrophe(tmp_path, pattern), timeout=2)
    ended = run(tmp_path, "exec", "plan.json", "--format", "jsonl",
                env=without_ripgrep(tmp_path / "bin"))
    assert ended.statuses() == ["timeout", "ok"], ended.stderr
    assert "still-here" in ended.results[1]["output"]  # the loop went on meanwhile
    assert ended.seconds < 2 + BOUND_S
    assert not nothing_left(tmp_path)  # the matching process was killed


@pytest.mark.parametrize(
    ("sig", "code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 130), (signal.SIGHUP, 129)],
)
def test_one_signal_ends_a_catastrophic_grep(tmp_path: Path, sig: int, code: int) -> None:
    _plan(tmp_path, _catastrophe(tmp_path, CATASTROPHIC[0]))
    env = without_ripgrep(tmp_path / "bin")

    def matching() -> bool:  # the event: this test's matching process runs
        return _scanning(tmp_path)

    ended = signalled(tmp_path, sig, matching, "exec", "plan.json", "--format", "jsonl",
                      env=env)
    assert ended.code == code, ended.stderr
    assert len(ended.results) == 2
    assert ended.results[0]["status"] == "interrupted"
    assert ended.seconds < BOUND_S
    assert not _scanning(tmp_path)


def _scanning(ws: Path) -> bool:
    """Whether a matching process of the run in ``ws`` is alive (not another test's: a
    test beside this one may be matching too)."""
    return any("_grep_scan.py" in line for line in left_running(ws))


# ------------------------------------------------------------------ files are streamed

GIB = 1 << 30
#: The address space toolrun runs in (``ulimit -v``): a whole file of 1 GB (read, then
#: decoded) would not fit; a chunk, and the 64 MiB a line is cut at, do.
ADDRESS_SPACE = GIB // 2


def _sparse(path: Path, size: int, head: bytes = b"needle\n") -> None:
    """A file of ``size`` bytes that costs nothing on the disk: ``head``, then holes."""
    with path.open("wb") as f:
        f.write(head)
        f.truncate(size)


@pytest.mark.slow  # reading 4 GB of holes takes seconds
@pytest.mark.parametrize(
    ("size", "grep"),
    [
        (4 * GIB, {"pattern": "needle", "path": "big.bin", "output_mode": "content"}),
        (GIB, {"pattern": "needle", "path": "big.bin"}),  # named: searched, as text
        (GIB, {"pattern": "needle", "path": "big.bin", "output_mode": "count"}),
        (GIB, {"pattern": "(?s)needle.x", "path": "big.bin", "multiline": True}),
    ],
)
def test_a_sparse_file_named_directly_costs_a_chunk(
    tmp_path: Path, size: int, grep: dict[str, Any]
) -> None:
    _sparse(tmp_path / "big.bin", size)
    _plan(tmp_path, {"tool": "Grep", "input": grep})
    ended = run(tmp_path, "exec", "plan.json", "--format", "jsonl",
                env=without_ripgrep(tmp_path / "bin"), address_space=ADDRESS_SPACE)
    assert ended.statuses() == ["ok", "ok"], ended.stderr
    result = ended.results[0]
    assert result["metadata"]["engine"] == "python"
    if grep.get("multiline"):  # the whole file is one text: searched in its first part
        assert "searched in its first 64 MiB only" in result["output"]
        assert result["metadata"]["cut"] == 1
    else:
        assert "big.bin" in result["output"]
        assert "first 64 MiB" in result["output"]  # the line of holes after it was cut


def test_a_4_gb_sparse_file_in_a_folder_is_skipped_as_binary(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    _sparse(tmp_path / "src" / "big.bin", 4 * GIB)
    (tmp_path / "src" / "small.txt").write_text("needle\n")
    _plan(tmp_path, {"tool": "Grep", "input": {"pattern": "needle", "path": "src"}})
    ended = run(tmp_path, "exec", "plan.json", "--format", "jsonl",
                env=without_ripgrep(tmp_path / "bin"), address_space=ADDRESS_SPACE)
    assert ended.statuses() == ["ok", "ok"], ended.stderr
    assert ended.results[0]["output"] == str(tmp_path / "src" / "small.txt")


def test_a_dry_run_diff_of_an_edit_to_a_fifo_ends(tmp_path: Path) -> None:
    _plan(tmp_path, _fifo_edit(tmp_path))
    ended = run(tmp_path, "exec", "plan.json", "--dry-run", "--diff", "--format", "text")
    assert ended.code == 0, ended.stderr
    assert ended.seconds < BOUND_S
    assert not nothing_left(tmp_path)
