"""Starting commands through the side process: what a caller of ``launch`` can count on."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from tests.marked import Marked
from toolrun.reaper.link import launch
from toolrun.reaper.run import run_command

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def output_of(argv: list[str], cwd: Path, **env: str) -> tuple[int | None, str]:
    chunks: list[bytes] = []
    code = await run_command(argv, cwd=cwd, env=env, time_limit=30, stdout=chunks.append)
    return code, b"".join(chunks).decode()


async def test_the_command_gets_its_argv_cwd_env_and_a_session_of_its_own(tmp_path: Path) -> None:
    script = 'echo "$0 $1 $PWD $GREETING"; ps -o sid= -p $$; echo $$'
    code, out = await output_of(
        ["sh", "-c", script, "zero", "one"], tmp_path, GREETING="hi", PATH=os.environ["PATH"]
    )

    first, sid, pid = out.splitlines()
    assert (code, first) == (0, f"zero one {tmp_path} hi")
    assert sid.strip() == pid  # a session leader: its group can be signalled as a whole


async def test_exit_codes_and_signals_are_reported_as_subprocess_does(tmp_path: Path) -> None:
    assert (await output_of(["sh", "-c", "exit 3"], tmp_path))[0] == 3
    assert (await output_of(["sh", "-c", "kill -TERM $$"], tmp_path))[0] == -signal.SIGTERM


async def test_a_missing_program_or_directory_raises_as_popen_does(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await launch([str(tmp_path / "nope")], cwd=tmp_path, env={}).started()
    with pytest.raises(FileNotFoundError):
        await launch(["true"], cwd=tmp_path / "gone", env=dict(os.environ)).started()
    with pytest.raises(OSError, match="null"):
        await launch(["echo", "a\0b"], cwd=tmp_path, env=dict(os.environ)).started()
    with pytest.raises(FileNotFoundError):  # run_command raises it too, after its clean-up
        await output_of(["no-such-program-here"], tmp_path, PATH=os.environ["PATH"])


async def test_extra_descriptors_arrive_under_the_numbers_asked_for(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        command = launch(
            [sys.executable, "-c", "import os; os.write(5, b'via five')"],
            cwd=tmp_path,
            env=dict(os.environ),
            pass_fds={write_end: 5},
        )
        os.close(write_end)
        assert await command.wait() == 0
        await command.finish()
        assert os.read(read_end, 100) == b"via five"
    finally:
        os.close(read_end)


async def test_a_leftover_that_keeps_forking_is_killed_whole(tmp_path: Path) -> None:
    """The tree is frozen before it is killed: forking faster does not get anything out."""
    marked = Marked(tmp_path)
    forker = f"for i in $(seq 300); do {marked.sleep} 99 & done; wait"
    command = f"setsid bash -c {forker!r} >/dev/null 2>&1 & until {marked.pgrep}; do :; done"
    try:
        code, _ = await output_of(["bash", "-c", command], tmp_path, PATH=os.environ["PATH"])

        assert code == 0
        assert marked.survivors() == []
    finally:
        marked.kill_all()


async def test_a_relative_working_directory_is_ours_not_the_side_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)

    code, out = await output_of(["pwd"], Path("sub"), PATH=os.environ["PATH"])

    assert (code, out) == (0, f"{tmp_path / 'sub'}\n")
