"""Starting commands through the side process: what a caller of ``launch`` can count on."""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest

from tests.marked import Marked
from toolrun.reaper.link import launch, side_pid
from toolrun.reaper.run import run_command
from toolrun.reaper.side import ENV_SLOTS

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


async def test_many_environments_each_reach_their_own_command(tmp_path: Path) -> None:
    """The side process holds environments between calls: more of them than it keeps,
    and then the first again, still give every command exactly its own."""
    path = os.environ["PATH"]
    names = [f"env-{i}" for i in range(ENV_SLOTS + 3)] + ["env-0", f"env-{ENV_SLOTS + 2}"]
    for name in names:
        code, out = await output_of(
            ["sh", "-c", "echo $WHO; env | wc -l"], tmp_path, WHO=name, PATH=path
        )
        assert (code, out.split()[0]) == (0, name)


async def test_the_same_environment_again_is_the_same_and_in_its_own_order(
    tmp_path: Path,
) -> None:
    """A call sending the environment of the call before sends only its slot: the same
    names and values in another order, or one value changed, is another environment,
    and every command sees exactly its own, in its order."""
    path = os.environ["PATH"]
    tables = [
        {"PATH": path, "A": "1", "B": "2"},
        {"PATH": path, "A": "1", "B": "2"},  # the same again
        {"PATH": path, "B": "2", "A": "1"},  # the same pairs, another order
        {"PATH": path, "B": "2", "A": "3"},  # a value changed
        {"PATH": path, "B": "2", "A": "3"},
    ]
    for table in tables:
        chunks: list[bytes] = []
        code = await run_command(["env"], cwd=tmp_path, env=table, time_limit=30,
                                 stdout=chunks.append)  # fmt: skip
        seen = [line.split("=", 1) for line in b"".join(chunks).decode().splitlines()]
        assert code == 0
        assert [pair for pair in seen if pair[0] in table] == [list(p) for p in table.items()]


async def test_commands_running_together_each_get_their_own_answers(tmp_path: Path) -> None:
    """Answers of every call share the side process's one socket: none goes astray."""
    results: dict[int, tuple[int | None, str]] = {}

    async def one(i: int) -> None:
        results[i] = await output_of(
            ["sh", "-c", f"sleep 0.0{i % 7}; echo out-{i}; exit {i % 5}"], tmp_path
        )

    async with anyio.create_task_group() as tg:
        for i in range(40):
            tg.start_soon(one, i)

    assert results == {i: (i % 5, f"out-{i}\n") for i in range(40)}


def test_commands_from_event_loops_in_several_threads(tmp_path: Path) -> None:
    """The side process serves every thread's event loop at the same time."""
    found: dict[int, list[tuple[int | None, str]]] = {}

    def thread(t: int) -> None:
        async def calls() -> list[tuple[int | None, str]]:
            return [
                await output_of(["sh", "-c", f"echo {t}-{i}; exit {i}"], tmp_path) for i in range(5)
            ]

        found[t] = anyio.run(calls)

    threads = [threading.Thread(target=thread, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)

    assert found == {t: [(i, f"{t}-{i}\n") for i in range(5)] for t in range(3)}


async def test_a_sink_that_fails_fails_the_call_and_kills_the_command(tmp_path: Path) -> None:
    marked = Marked(tmp_path)

    def refuse(chunk: bytes) -> None:
        raise OSError(28, "No space left on device")

    try:
        with pytest.raises(OSError, match="No space left"):
            await run_command(
                ["sh", "-c", f"echo first; {marked.sleep} 99"],
                cwd=tmp_path,
                env={"PATH": os.environ["PATH"]},
                time_limit=30,
                stdout=refuse,
            )
        assert marked.survivors() == []
    finally:
        marked.kill_all()


async def test_input_larger_than_a_pipe_reaches_the_command_whole(tmp_path: Path) -> None:
    data = os.urandom(1 << 20).hex().encode()  # 2 MiB: written as the command reads
    chunks: list[bytes] = []
    code = await run_command(
        ["sh", "-c", "wc -c"],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
        time_limit=30,
        stdout=chunks.append,
        stdin=data,
    )
    assert (code, b"".join(chunks).strip()) == (0, str(len(data)).encode())


async def test_a_cancelled_call_kills_its_command(tmp_path: Path) -> None:
    marked = Marked(tmp_path)
    try:
        with anyio.move_on_after(0.5):
            await output_of(["sh", "-c", f"{marked.sleep} 99"], tmp_path, PATH=os.environ["PATH"])
        assert marked.survivors() == []
    finally:
        marked.kill_all()


async def test_a_request_larger_than_the_socket_buffer_arrives_whole(tmp_path: Path) -> None:
    big = {f"BIG{i}": str(i) * 100_000 for i in range(8)}  # about 800 kB of environment
    code, out = await output_of(
        ["sh", "-c", 'echo "${#BIG0} ${#BIG7}"'], tmp_path, PATH=os.environ["PATH"], **big
    )
    assert (code, out) == (0, "100000 100000\n")


async def test_a_side_process_killed_mid_call_takes_the_command_down_and_is_replaced(
    tmp_path: Path,
) -> None:
    marked = Marked(tmp_path)
    try:
        command = launch(
            ["sh", "-c", f"{marked.sleep} 99"], cwd=tmp_path, env={"PATH": os.environ["PATH"]}
        )
        await command.started()
        marked.wait_for(1)

        os.kill(side_pid(), signal.SIGKILL)

        assert await command.wait() == -signal.SIGKILL
        command.close()
        assert marked.survivors() == []
        assert await output_of(["sh", "-c", "echo again"], tmp_path) == (0, "again\n")
    finally:
        marked.kill_all()


def side_descriptors() -> int:
    return len(os.listdir(f"/proc/{side_pid()}/fd"))


async def test_captured_output_larger_than_the_side_holds_arrives_whole_and_in_order(
    tmp_path: Path,
) -> None:
    """The side process reads a merged-output command's pipe for us: when we do not take
    the output as fast as it comes, it stops reading (the command waits on its pipe, as it
    would on ours) rather than hold it all."""
    await output_of(["true"], tmp_path)  # the side process runs
    baseline = _peak_rss_kb(side_pid())
    size = 48 << 20
    digest = hashlib.sha256()
    total = 0

    def slow(chunk: bytes) -> None:
        nonlocal total
        digest.update(chunk)
        total += len(chunk)
        time.sleep(0.0005)  # the event loop (and so the reading of answers) stalls

    script = f"import sys; sys.stdout.buffer.write(bytes(range(256)) * ({size} // 256))"
    code = await run_command(
        [sys.executable, "-c", script], cwd=tmp_path, env={}, time_limit=120, stdout=slow
    )
    assert (code, total) == (0, size)
    assert digest.hexdigest() == hashlib.sha256(bytes(range(256)) * (size // 256)).hexdigest()
    # far less than the output: what waits for us is capped
    assert _peak_rss_kb(side_pid()) - baseline < 16 * 1024


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


async def test_captured_pipes_are_let_go_of_however_a_call_ends(tmp_path: Path) -> None:
    """Commands that cannot start, are cancelled, time out or leave a process holding
    their output: the side process keeps none of their pipes."""
    marked = Marked(tmp_path)
    await output_of(["true"], tmp_path)
    before = side_descriptors()
    try:
        for _ in range(5):
            with pytest.raises(FileNotFoundError):
                await output_of([str(tmp_path / "missing")], tmp_path)
            with anyio.move_on_after(0.2):
                await output_of(["sh", "-c", f"echo x; {marked.sleep} 99"], tmp_path,
                                PATH=os.environ["PATH"])
            code = await run_command(
                ["sh", "-c", f"{marked.sleep} 99"], cwd=tmp_path,
                env={"PATH": os.environ["PATH"]}, time_limit=0.2, stdout=lambda _: None
            )
            assert code is None  # timed out
            # a background holder of the output outlives the command: swept after it
            code, out = await output_of(
                ["sh", "-c", f"{marked.sleep} 99 & echo held"], tmp_path, PATH=os.environ["PATH"]
            )
            assert (code, out) == (0, "held\n")
        assert marked.survivors() == []
        assert side_descriptors() == before
    finally:
        marked.kill_all()


async def test_output_written_after_the_command_exits_still_arrives(tmp_path: Path) -> None:
    """What the command left writes on for a moment; that reaches the caller too."""
    code, out = await output_of(
        ["sh", "-c", "(sleep 0.05; echo late) & echo early"], tmp_path, PATH=os.environ["PATH"]
    )
    assert (code, out) == (0, "early\nlate\n")


async def test_captured_output_with_stdin_and_extra_descriptors(tmp_path: Path) -> None:
    """A captured command still gets the input and the extra descriptors it is given."""
    chunks: list[bytes] = []
    read_in, write_in = os.pipe()
    read_extra, write_extra = os.pipe()
    os.write(write_in, b"from stdin\n")
    os.close(write_in)
    try:
        script = "import os, sys; print(sys.stdin.read().strip()); os.write(5, b'via five')"
        command = launch(
            [sys.executable, "-c", script], cwd=tmp_path, env=dict(os.environ),
            stdin=read_in, pass_fds={write_extra: 5}, capture=chunks.append,
        )
        os.close(write_extra)
        assert await command.wait() == 0
        await command.until(lambda: not command.output_open)
        await command.finish()
        assert b"".join(chunks) == b"from stdin\n"
        assert os.read(read_extra, 100) == b"via five"
    finally:
        os.close(read_in)
        os.close(read_extra)


async def test_a_captured_command_without_input_reads_dev_null(tmp_path: Path) -> None:
    code, out = await output_of(["sh", "-c", "cat; readlink /proc/self/fd/0"], tmp_path,
                                PATH=os.environ["PATH"])
    assert (code, out) == (0, "/dev/null\n")


async def test_an_interrupt_kept_but_raised_already_is_not_raised_again(tmp_path: Path) -> None:
    # Two interrupts close together: the second lands after the receive lowered its flag
    # and is raised at once, while the first still waits to be raised. That first is
    # spent (the program is already being interrupted): the next receive must not raise
    # it again in the middle of the clean-up that follows.
    from toolrun.reaper import link

    link._deferred.append(KeyboardInterrupt())
    try:
        code, out = await output_of(["echo", "still here"], tmp_path, PATH=os.environ["PATH"])
    finally:
        link._deferred.clear()
    assert (code, out) == (0, "still here\n")
