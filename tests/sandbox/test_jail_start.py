"""A jail starts as soon as a judged call is decided, from the deciding thread, the probe
beside it; the probe's no ends it (#25 point 5, #31 point 2)."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest

from tests.sandbox.conftest import needs_bwrap, write
from toolrun.execution.jailing import JailKeeper
from toolrun.reaper import jail as jails
from toolrun.reaper.run import run_command
from toolrun.sandbox.availability import probe, start_probe


def _logged_bwrap(tmp_path: Path, before: str = "") -> tuple[Path, Path]:
    """A bwrap that notes each start in a log, then is the real one (or fails, ``before``)."""
    log = tmp_path / "starts.log"
    real = shutil.which("bwrap") or "/usr/bin/bwrap"
    fake = write(tmp_path / "bin" / "bwrap",
                 f'#!/bin/sh\necho "$$" >> {log}\n{before}exec {real} "$@"\n')
    fake.chmod(0o755)
    return fake, log


def _starts(log: Path) -> int:
    """The bubblewraps started so far (none yet: the log is made by the first)."""
    return len(log.read_text().split()) if log.exists() else 0


def _run(jail: jails.Jail, command: str) -> tuple[int | None, str]:
    out: list[bytes] = []

    async def go() -> int | None:
        token = jails.current.set(jail)
        try:
            return await run_command(["bash", "-c", command], cwd="/", env=dict(os.environ),
                                     time_limit=30, stdout=out.append)
        finally:
            jails.current.reset(token)

    return asyncio.run(go()), b"".join(out).decode()


@needs_bwrap
def test_the_jail_is_running_when_prestart_returns(tmp_path: Path) -> None:
    """Not left to a background thread, which a busy interpreter lock kept waiting."""
    bwrap, log = _logged_bwrap(tmp_path)
    keeper = JailKeeper([tmp_path], None, warn=lambda _: None)
    try:
        keeper.prestart(str(bwrap), "read-only")
        started = keeper._jails["read-only"]
        assert started.side.pid > 0  # its bubblewrap and side process are on their way
        jail = keeper.jail(str(bwrap), "read-only")
        assert jail is started  # the call gets that jail, made once
        assert keeper.enforced is True
        code, output = _run(jail, f"echo hi; touch {tmp_path}/x")
        assert code != 0 and "hi" in output and not (tmp_path / "x").exists()
        assert len(log.read_text().split()) == 2  # the probe, and the one jail
    finally:
        keeper.close()


@needs_bwrap
@pytest.mark.parametrize("overlap", [False, True])
def test_a_run_whose_calls_may_overlap_starts_every_side_process_ahead(
    tmp_path: Path, overlap: bool
) -> None:
    """While the run is still being decided (a core waits then), not at its second call."""
    bwrap, log = _logged_bwrap(tmp_path)
    keeper = JailKeeper([tmp_path], None, warn=lambda _: None)
    keeper.overlap = overlap
    try:
        keeper.prestart(str(bwrap), "read-only")
        started = keeper._jails["read-only"]
        assert [side.pid > 0 for side in started.sides] == [True] * (jails.SIDES if overlap else 1)
        # the probe, and one bubblewrap per side process
        deadline = time.monotonic() + 10
        while _starts(log) < 1 + len(started.sides):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        code, output = _run(keeper.jail(str(bwrap), "read-only") or started, "echo hi")
        assert (code, output) == (0, "hi\n")
    finally:
        keeper.close()


def test_a_jail_started_before_the_probe_said_no_is_ended_and_said_once(tmp_path: Path) -> None:
    refusing, _ = _logged_bwrap(
        tmp_path, "echo 'bwrap: No permissions to create new namespace' >&2; exit 1\n"
    )
    said: list[str] = []
    keeper = JailKeeper([tmp_path], None, warn=said.append)
    try:
        keeper.prestart(str(refusing), "read-only")
        assert keeper.jail(str(refusing), "read-only") is None
        assert keeper.jail(str(refusing), "read-only") is None
        assert keeper._jails == {}  # the one started ahead is gone
        assert len(said) == 1 and "cannot create namespaces" in said[0]
        assert keeper.enforced is False
    finally:
        keeper.close()


@needs_bwrap
def test_a_probe_started_early_is_the_one_answer(tmp_path: Path) -> None:
    bwrap, log = _logged_bwrap(tmp_path)
    start_probe(str(bwrap))
    start_probe(str(bwrap))  # (started once)
    assert probe(str(bwrap)).ok
    assert probe(str(bwrap)).ok
    assert len(log.read_text().split()) == 1


def test_an_early_probe_of_a_missing_bwrap_says_what_the_probe_says() -> None:
    start_probe("/nonexistent/early/bwrap")
    found = probe("/nonexistent/early/bwrap")
    assert not found.ok
    assert "bubblewrap (bwrap) is not installed at /nonexistent/early/bwrap" in str(found.reason)
