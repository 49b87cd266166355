from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

import anyio
import pytest
from pydantic import ValidationError

from tests.marked import Marked
from toolrun.errors import ToolError, ToolTimeoutError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins.bash import BashInput, BashTool

pytestmark = pytest.mark.anyio

bash = BashTool()


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until_dead(pid: int, timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def wait_for_file(path: Path, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} was not created"
        time.sleep(0.01)


def wait_for_content(path: Path, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} was not written"
        time.sleep(0.01)


async def test_stdout_and_stderr_are_merged_in_order(ctx: ToolContext) -> None:
    result = await bash.run(BashInput(command="echo one; echo two >&2; echo three"), ctx)

    assert result.output == "one\ntwo\nthree\n"
    assert not result.is_error
    assert result.metadata["exit_code"] == 0


async def test_a_non_zero_exit_is_an_error_result(ctx: ToolContext) -> None:
    result = await bash.run(BashInput(command="echo failing; exit 3"), ctx)

    assert result.is_error
    assert result.output == "failing\n"
    assert result.metadata["exit_code"] == 3


async def test_a_command_killed_by_a_signal_reports_128_plus_n(ctx: ToolContext) -> None:
    result = await bash.run(BashInput(command="kill -KILL $$"), ctx)

    assert result.metadata["exit_code"] == 137


async def test_runs_in_the_context_cwd(ws: Path) -> None:
    (ws / "sub").mkdir()
    ctx = ToolContext(workspace=ws, cwd=ws / "sub")

    result = await bash.run(BashInput(command="pwd"), ctx)

    assert result.output == f"{ws / 'sub'}\n"


async def test_cd_is_reported_as_the_new_cwd(ws: Path, ctx: ToolContext) -> None:
    (ws / "src").mkdir()

    result = await bash.run(BashInput(command="cd src && echo moved"), ctx)

    assert result.output == "moved\n"
    assert result.metadata["cwd"] == str(ws / "src")


async def test_the_cwd_is_reported_after_exit_and_failure_too(ws: Path, ctx: ToolContext) -> None:
    (ws / "src").mkdir()

    result = await bash.run(BashInput(command="cd src; exit 4"), ctx)

    assert result.metadata == {"exit_code": 4, "cwd": str(ws / "src")}


async def test_cwd_is_unchanged_by_subshells_and_child_shells(ws: Path, ctx: ToolContext) -> None:
    result = await bash.run(BashInput(command="(cd /); bash -c 'cd /'; sh -c 'cd /'"), ctx)

    assert result.metadata["cwd"] == str(ws)


@pytest.mark.parametrize(
    "command",
    [
        "echo )",
        "echo out; echo err >&2; exit 5",
        'echo "$0 $- ${BASH_ENV-unset}"',
        "set -x; cd /; echo traced",
    ],
)
async def test_the_wrapper_is_invisible(ctx: ToolContext, command: str) -> None:
    """Output, exit code and error messages are those of a plain `bash -c`."""
    plain = await anyio.run_process(
        [shutil.which("bash") or "bash", "-c", command],
        stderr=subprocess.STDOUT,
        check=False,
        cwd=ctx.cwd,
    )

    result = await bash.run(BashInput(command=command), ctx)

    assert result.output == plain.stdout.decode()
    assert result.metadata["exit_code"] == plain.returncode


async def test_bash_env_is_not_visible_to_the_command(ctx: ToolContext) -> None:
    result = await bash.run(
        BashInput(command='echo "${BASH_ENV-unset}"; env | grep -c BASH_ENV'), ctx
    )

    assert result.output == "unset\n0\n"


async def test_the_context_env_replaces_the_process_env(ws: Path) -> None:
    ctx = ToolContext(workspace=ws, cwd=ws, env={"PATH": os.environ["PATH"], "GREETING": "hi"})

    result = await bash.run(BashInput(command='echo "$GREETING ${HOME-nohome}"'), ctx)

    assert result.output == "hi nohome\n"


async def test_stdin_is_empty(ctx: ToolContext) -> None:
    result = await bash.run(BashInput(command="cat; echo done"), ctx)

    assert result.output == "done\n"


async def test_python_child_output(ctx: ToolContext) -> None:
    result = await bash.run(BashInput(command=f"'{sys.executable}' -c 'print(6 * 7)'"), ctx)

    assert result.output == "42\n"


async def test_a_timeout_kills_the_whole_process_group(ws: Path, ctx: ToolContext) -> None:
    command = "echo started; sleep 30 & echo $! > child.pid; wait"

    with pytest.raises(ToolTimeoutError) as e:
        await bash.run(BashInput(command=command, timeout=300), ctx)

    assert str(e.value) == "command timed out after 300 ms; output so far:\nstarted\n"
    child = int((ws / "child.pid").read_text())
    assert wait_until_dead(child), f"background child {child} survived the timeout"


async def test_cancelling_the_call_kills_the_process_group(ws: Path, ctx: ToolContext) -> None:
    pidfile = ws / "child.pid"

    async with anyio.create_task_group() as tg:
        tg.start_soon(bash.run, BashInput(command="sleep 30 & echo $! > child.pid; wait"), ctx)
        await anyio.to_thread.run_sync(wait_for_content, pidfile)
        tg.cancel_scope.cancel()

    child = int(pidfile.read_text())
    assert wait_until_dead(child), f"background child {child} survived cancellation"


async def test_a_background_child_holding_the_output_is_killed(ws: Path, ctx: ToolContext) -> None:
    result = await bash.run(BashInput(command="sleep 30 & echo $! > child.pid; echo bye"), ctx)

    assert result.output == "bye\n"
    assert wait_until_dead(int((ws / "child.pid").read_text()))


#: Ways to leave a process running after the command ends; {s} is the marked sleep.
LEAKS = {
    "& with a redirect": "{s} 99 >/dev/null 2>&1 &",
    "setsid &": "setsid {s} 99 >/dev/null 2>&1 &",
    "nohup & disown": "nohup {s} 99 >/dev/null 2>&1 & disown",
    "double fork": "( {s} 99 >/dev/null 2>&1 & )",
    "daemon closing its fds": "{daemon}",
    # other spellings of the same escape
    "setsid --fork, empty environment": "env -i setsid -f {s} 99 >/dev/null 2>&1",
    "nested shell": "bash -c '{s} 99 >/dev/null 2>&1 &'",
    "exec into setsid": "exec setsid -f {s} 99 >/dev/null 2>&1",
    "coproc": "coproc {s} 99",
    "holding the output": "{s} 99 &",
    "process substitution": "cat <(setsid {s} 99 >/dev/null 2>&1 & echo) >/dev/null",
    "many at once": "for i in 1 2 3 4 5 6 7 8; do setsid {s} 99 >/dev/null 2>&1 & done",
}


@pytest.mark.parametrize("command", LEAKS.values(), ids=LEAKS.keys())
async def test_nothing_the_command_started_outlives_it(
    ws: Path, ctx: ToolContext, command: str
) -> None:
    marked = Marked(ws)
    line = command.format(s=marked.sleep, daemon=marked.daemon)
    # the command itself waits until what it left runs, so the check below is not vacuous
    probe = f"until {marked.pgrep}; do sleep 0.01; done"
    try:
        await bash.run(BashInput(command=f"{line}\n{probe}"), ctx)

        assert marked.survivors() == []
    finally:
        marked.kill_all()


async def test_setsid_in_a_call_that_timed_out_is_killed(ws: Path, ctx: ToolContext) -> None:
    marked = Marked(ws)
    command = f"setsid {marked.sleep} 99 >/dev/null 2>&1 & {marked.sleep} 98"
    try:
        with pytest.raises(ToolTimeoutError):
            await bash.run(BashInput(command=command, timeout=500), ctx)

        assert marked.survivors() == []
    finally:
        marked.kill_all()


async def test_a_concurrent_call_ending_leaves_the_other_calls_processes_alone(
    ws: Path, ctx: ToolContext
) -> None:
    """What a running call started (orphaned too, in its session) is its own until it ends;
    what the ended call left dies at once."""
    marked, second = Marked(ws), Marked(ws)
    first = (
        f"( {marked.sleep} 99 >/dev/null 2>&1 & ); touch started; "
        "until [ -e second-done ]; do sleep 0.01; done; "
        f"{marked.pgrep} && echo still-running"
    )
    try:
        async with anyio.create_task_group() as tg:

            async def run_first() -> None:
                result = await bash.run(BashInput(command=first, timeout=20_000), ctx)
                assert result.output == "still-running\n"

            tg.start_soon(run_first)
            await anyio.to_thread.run_sync(wait_for_file, ws / "started")
            leave = f"setsid {second.sleep} 99 >/dev/null 2>&1 & until {second.pgrep}; do :; done"
            await bash.run(BashInput(command=leave), ctx)
            assert second.survivors() == []
            (ws / "second-done").touch()

        assert marked.survivors() == []
    finally:
        marked.kill_all()
        second.kill_all()


async def test_a_missing_working_directory(ws: Path) -> None:
    ctx = ToolContext(workspace=ws, cwd=ws / "gone")

    with pytest.raises(ToolError) as e:
        await bash.run(BashInput(command="true"), ctx)
    assert str(e.value) == f"working directory {ws / 'gone'} does not exist"


def test_timeout_is_in_milliseconds_up_to_ten_minutes() -> None:
    assert BashInput(command="x", timeout=600_000).timeout == 600_000
    with pytest.raises(ValidationError):
        BashInput(command="x", timeout=600_001)
    assert BashInput.model_validate({"command": "ls", "description": "list"}).description == "list"


def test_bash_names_no_paths_of_its_own() -> None:
    # its file arguments and redirect targets are checked by the permission engine
    assert bash.affected_paths(BashInput(command="ls"), ToolContext.for_workspace("/")) == ()


def test_read_only_asks_the_permissions_module(monkeypatch: pytest.MonkeyPatch, ws: Path) -> None:
    calls: list[tuple[str, Path, Path]] = []

    def is_read_only_command(command: str, cwd: Path, workspace: Path) -> bool:
        calls.append((command, cwd, workspace))
        return command == "ls"

    fake = types.ModuleType("toolrun.permissions.readonly")
    fake.is_read_only_command = is_read_only_command  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toolrun.permissions.readonly", fake)
    ctx = ToolContext(workspace=ws, cwd=ws / "sub")

    assert bash.is_concurrency_safe(BashInput(command="ls"), ctx)
    assert not bash.is_read_only(BashInput(command="rm x"), ctx)
    assert calls == [("ls", ws / "sub", ws), ("rm x", ws / "sub", ws)]


@pytest.mark.parametrize(
    ("command", "may"),
    [
        ("echo hi", False),
        ("ls -la | grep x", False),
        ("git status && git diff", False),
        ("echo cdrom", False),
        ("cd sub", True),
        ("make && cd build", True),
        ("pushd /tmp", True),
        ("source env.sh", True),
        (". ./env.sh", True),
        ("x; . env.sh", True),
        ('eval "$X"', True),
        ("exec bash", True),
        ("(cd a)", True),  # a subshell cannot move us, but a false alarm only costs time
    ],
)
def test_which_commands_get_the_cwd_probe(command: str, may: bool) -> None:
    from toolrun.tools.builtins.bash import may_change_directory

    assert may_change_directory(command, {}) is may
    assert may_change_directory(command, {"BASH_ENV": "/etc/x"}) is True


def test_the_cwd_probe_test_without_its_regex_says_what_the_regex_says() -> None:
    """Commands without any word of the regex (nor a dot) are answered without it: for
    every mix of those words, separators and near misses, the answer is the regex's."""
    import itertools

    from toolrun.tools.builtins.bash import _MAY_CD, may_change_directory

    pieces = ["cd", "popd", "xcd", "cdx", "eval", "source", "command", "builtin", "exec",
              "pushd", ".", "./a", " ", ";", "(", "`", "\t", "echo", "é", "\u3000", "_"]  # fmt: skip
    for a, b, c in itertools.product(pieces, repeat=3):
        command = a + b + c
        assert may_change_directory(command, {}) is (_MAY_CD.search(command) is not None), command


@pytest.mark.anyio
async def test_cwd_is_reported_without_the_probe_too(tmp_path: Path) -> None:
    from toolrun.tools.base import ToolContext
    from toolrun.tools.builtins.bash import BashInput, BashTool

    os.mkdir(tmp_path / "sub")
    ctx = ToolContext.for_workspace(tmp_path)
    out = await BashTool().run(BashInput(command="echo plain"), ctx)
    assert out.metadata["cwd"] == str(ctx.workspace)
    moved = await BashTool().run(BashInput(command="echo x && cd sub"), ctx)
    assert moved.metadata["cwd"] == str(ctx.workspace / "sub")
