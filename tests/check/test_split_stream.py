"""The parts of a split check: their shares of the calls, and a part's records joined as
its process writes them (a process that dies half way through still loses no call)."""

from __future__ import annotations

import itertools
import json
import os
import random
import select
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.check.helpers import running, write
from tests.check.test_split_check import CONFIG, children, stable, toolrun
from toolrun.commands import split_check
from toolrun.report.models import CallCheck


def test_the_parts_cover_every_turn_once_in_order() -> None:
    rnd = random.Random(31)
    for _ in range(3000):
        sizes = [rnd.choice([0, 0, 1, 3, 10, 40, 500]) for _ in range(rnd.randrange(1, 30))]
        parts = rnd.randrange(1, 6)
        spans = split_check.size_ranges(sizes, parts)
        assert len(spans) == min(parts, len(sizes))
        assert spans[0][0] == 0 and spans[-1][1] == len(sizes)
        assert all(a < b for a, b in spans)  # never an empty part
        assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


def test_the_part_process_gets_fewer_calls_for_the_work_it_adds() -> None:
    # this process also joins the other part's records; that one keeps what the marks
    # across parts need and sends its records: each finishes at the same time
    first, second = split_check.shares(2)
    assert first + second == pytest.approx(1)
    assert first == pytest.approx(
        (split_check.PART_COST - split_check.JOIN_COST)
        / (split_check.PART_COST + 1 - split_check.JOIN_COST)
    )
    spans = split_check.size_ranges([10] * 1000, 2)
    assert spans == [(0, round(first * 1000)), (round(first * 1000), 1000)]
    # a part ends at the turn boundary nearest its share, not past a big turn
    assert split_check.size_ranges([10] * 5 + [3, 200, 10, 10], 2)[0] == (0, 6)
    assert split_check.shares(1) == [1.0]
    assert sum(split_check.shares(4)) == pytest.approx(1)


def _records(n: int) -> tuple[CallCheck, ...]:
    record = CallCheck(0, "call-1", "Read", {"file_path": "a"}, "allow", "mode", None, None,
                       "allowed", "skipped", None, 1, 1, 1, 1, "concurrent", "exec_1")  # fmt: skip
    return tuple(record._replace(position=i, id=f"call-{i + 1}") for i in range(n))


def test_a_part_s_records_are_joined_as_its_process_writes_them() -> None:
    """The records a part process wrote are read before it is done (while it decides
    the rest, this process joins them): here it goes on only once its first batch came
    back, or gives up (and its part counts as failed) after a minute."""
    calls = _records(split_check.BATCH + 10)
    told_read, told_write = os.pipe()

    def work(sink: split_check.Sink) -> split_check.Decided:
        sink(list(calls[: split_check.BATCH]))
        if not select.select([told_read], [], [], 60)[0]:
            raise TimeoutError("the first batch was not read while the process ran")
        return ((1, "concurrent", len(calls)),), calls[split_check.BATCH :]

    forked: list[tuple[int, int]] = []
    split_check.fork_part(work, lambda pid, fd: forked.append((pid, fd)))
    os.close(told_read)
    (pid, fd), seen = forked[0], []

    def convert(row: list[Any], shift: int) -> CallCheck:
        if not seen:
            os.write(told_write, b"x")  # the first row is in: the process may go on
        seen.append(row[0])
        return split_check._record(row, shift)

    try:
        got = split_check.collect_part(pid, fd, 0, convert)
    finally:
        os.close(told_write)
    assert got == (((1, "concurrent", len(calls)),), calls)
    assert seen == list(range(len(calls)))


def test_without_a_pidfd_a_part_is_read_once_its_process_has_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _records(2 * split_check.BATCH + 10)

    def work(sink: split_check.Sink) -> split_check.Decided:
        sink(list(calls[: split_check.BATCH]))
        time.sleep(0.1)
        sink(list(calls[split_check.BATCH : 2 * split_check.BATCH]))
        return ((1, "concurrent", len(calls)),), calls[2 * split_check.BATCH :]

    monkeypatch.delattr(os, "pidfd_open")  # (Linux before 5.3, macOS)
    forked: list[tuple[int, int]] = []
    split_check.fork_part(work, lambda pid, fd: forked.append((pid, fd)))
    assert split_check.collect_part(*forked[0]) == (((1, "concurrent", len(calls)),), calls)
    assert not Path(f"/proc/{forked[0][0]}").exists()  # reaped


def test_a_part_process_that_dies_while_its_records_are_read_is_a_failed_part() -> None:
    calls = _records(3 * split_check.BATCH)

    def work(sink: split_check.Sink) -> split_check.Decided:
        sink(list(calls[: split_check.BATCH]))
        time.sleep(0.2)  # (read meanwhile)
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("not reached")

    forked: list[tuple[int, int]] = []
    split_check.fork_part(work, lambda pid, fd: forked.append((pid, fd)))
    joiner = split_check.Joiner()
    assert not joiner.collect(*forked[0])
    assert joiner.calls == [] and not Path(f"/proc/{forked[0][0]}").exists()  # reaped


def _uneven_plan(ws: Path) -> Path:
    """A plan whose first half is cheap (one Read, again and again: the memo answers) and
    whose second half is not (distinct compound commands): the check's own part is done
    long before its part process is."""
    write(ws / "toolrun.yaml", json.dumps(CONFIG) + "\n")
    cheap = [{"calls": [{"tool": "Read", "input": {"file_path": "src/a.py"}}] * 10}] * 600
    dear = [
        {"calls": [{"tool": "Bash", "input": {"command": f"git log -n {t} && ls d{t}{j} | head -{j + 1}"}}
                   for j in range(10)]}
        for t in range(600)
    ]  # fmt: skip
    return write(ws / "plan.json", json.dumps({"turns": cheap + dear}))


def _written(pid: int) -> int:
    """How many bytes of records the part process ``pid`` has written to its file (an
    unnamed one: deleted, or never named)."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return 0
    for fd in fds:
        try:
            if os.readlink(fd).endswith("(deleted)") and stat.S_ISREG(os.stat(fd).st_mode):
                return os.stat(fd).st_size
        except OSError:
            pass
    return 0


def _reading(ws: Path) -> tuple[subprocess.Popen[str], int]:
    """A check of ``_uneven_plan`` and its part process, once that has written records
    (its parent, done with its own part, reads them)."""
    plan = _uneven_plan(ws)
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolrun", "check", plan.name, "--jobs", "2", "--format", "jsonl"],
        cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # a process group of its own, as a shell would start it
    )  # fmt: skip
    child = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        child = child or next((c for c in children(proc.pid) if running(c)), 0)
        if child and _written(child) > 0:
            break
        time.sleep(0.002)
    assert child and proc.poll() is None, "no part process wrote records while the check ran"
    return proc, child


def test_a_part_process_killed_once_its_first_records_are_read_loses_no_call(ws: Path) -> None:
    proc, child = _reading(ws)
    plan = ws / "plan.json"
    os.kill(child, signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    expected = toolrun(ws, plan.name, "--jobs", "1", "--format", "jsonl")
    assert proc.returncode == expected.returncode == 0, err
    assert stable(out) == stable(expected.stdout) and out.count("\n") == 12_000
    assert not Path(f"/proc/{child}").exists()


def test_ctrl_c_while_a_part_s_records_are_read_ends_every_process(ws: Path) -> None:
    proc, child = _reading(ws)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in err and out == ""
    assert not Path(f"/proc/{child}").exists()  # ended and reaped, not left behind
