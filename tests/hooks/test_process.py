"""A hook command leaves nothing running: run_command against the real process table."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.marked import Marked
from toolrun.hooks.process import run_command

pytestmark = pytest.mark.anyio

#: What a hook may leave behind; {s} is the marked sleep. Only the first holds its pipes.
LEAKS = {
    "background job holding stdout": "{s} 99 &",
    "& with a redirect": "{s} 99 >/dev/null 2>&1 &",
    "setsid &": "setsid {s} 99 >/dev/null 2>&1 &",
    "setsid --fork": "setsid -f {s} 99 >/dev/null 2>&1",
    "nohup, double fork": "( nohup {s} 99 >/dev/null 2>&1 & )",
    "empty environment": "env -i setsid -f {s} 99 >/dev/null 2>&1 </dev/null",
    "daemon closing its fds": "{daemon}",
}


@pytest.mark.parametrize("command", LEAKS.values(), ids=LEAKS.keys())
async def test_nothing_a_hook_started_outlives_it(tmp_path: Path, command: str) -> None:
    marked = Marked(tmp_path)
    line = command.format(s=marked.sleep, daemon=marked.daemon)
    try:
        result = await run_command(
            f"{line}\nuntil {marked.pgrep}; do sleep 0.01; done; echo left",
            b"{}",
            cwd=tmp_path,
            env=os.environ,
            time_limit=30,
        )

        assert (result.returncode, result.stdout) == (0, "left\n")
        assert marked.survivors() == []
    finally:
        marked.kill_all()


async def test_setsid_in_a_hook_that_timed_out_is_killed(tmp_path: Path) -> None:
    marked = Marked(tmp_path)
    command = f"setsid {marked.sleep} 99 >/dev/null 2>&1 & {marked.sleep} 98"
    try:
        result = await run_command(command, b"", cwd=tmp_path, env=os.environ, time_limit=0.5)

        assert result.timed_out
        assert marked.survivors() == []
    finally:
        marked.kill_all()


async def test_the_input_reaches_the_hook_and_a_missing_shell_is_a_spawn_error(
    tmp_path: Path,
) -> None:
    echoed = await run_command("cat", b'{"a": 1}', cwd=tmp_path, env=os.environ, time_limit=30)
    missing = await run_command("true", b"", cwd=tmp_path / "gone", env=os.environ, time_limit=30)

    assert echoed.stdout == '{"a": 1}'
    assert missing.spawn_error is not None and "No such file" in missing.spawn_error
