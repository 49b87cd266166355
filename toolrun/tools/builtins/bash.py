"""Bash: run a shell command in its own process group, tracking the working directory.

How the working directory is tracked: bash reads the file named by ``BASH_ENV``
before it runs a ``-c`` command. One init file per toolrun process (in a private
temporary folder) unsets ``BASH_ENV`` (so child shells do not run it) and sets
an EXIT trap writing ``pwd -P`` to the file named by the call's
``TOOLRUN_CWD_FILE``, which it also unsets. Sharing the init file keeps the cost
of a call to the fork and exec: a folder per call cost more than the shell. The command string itself is passed unchanged, so
its output, exit code, line numbers and syntax-error messages are exactly those
of ``bash -c COMMAND``. Bash keeps the exit status across an EXIT trap, and
subshells do not inherit the trap. When the file stays empty (``exec``, a
command that replaces the EXIT trap, a deleted directory) the working directory
is reported unchanged.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import itertools
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.abc
from pydantic import Field, StrictBool

from toolrun.errors import ToolError, ToolTimeoutError
from toolrun.tools.base import BaseTool, ToolContext, ToolInput, ToolKind, ToolOutput

if TYPE_CHECKING:
    from toolrun.sandbox.run import Launcher

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
#: After the shell exits, how long background children may keep the output open.
OUTPUT_GRACE_S = 0.25
#: Between SIGTERM and SIGKILL when a command is stopped.
KILL_GRACE_S = 0.5
#: Output kept: this many bytes from the start and this many from the end.
KEEP_HEAD_BYTES = KEEP_TAIL_BYTES = 512 * 1024
#: The end of the output that a timeout error message quotes.
TIMEOUT_OUTPUT_CHARS = 30_000


class BashInput(ToolInput):
    command: str = Field(description="The command to run with `bash -c`.")
    timeout: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=(
            f"Timeout in milliseconds (default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS})."
        ),
    )
    description: str | None = Field(
        default=None, description="A few words on what the command does (shown to people)."
    )
    dangerouslyDisableSandbox: StrictBool = Field(
        default=False, description="Run outside the sandbox (when the settings allow it)."
    )


class BashTool(BaseTool[BashInput]):
    name = "Bash"
    description = (
        "Run a bash command in the working directory, which carries from call to call "
        "(`cd` persists). stdout and stderr are merged; a non-zero exit is an error."
    )
    kind = ToolKind.EXECUTE
    concurrency = "read-only input"
    input_model = BashInput

    def is_concurrency_safe(self, input: BashInput, ctx: ToolContext | None = None) -> bool:
        return self.is_read_only(input, ctx)

    def is_read_only(self, input: BashInput, ctx: ToolContext | None = None) -> bool:
        """Whether the command is in the read-only set (fail closed: False when unsure).

        Without ``ctx`` the process's current directory stands in for both the Bash cwd
        and the workspace.
        """
        # imported here: the permission package is not needed to list or load tools
        from toolrun.permissions.readonly import is_read_only_command as check

        cwd = ctx.cwd if ctx is not None else Path.cwd()
        workspace = ctx.workspace if ctx is not None else cwd
        return bool(check(input.command, cwd, workspace))

    async def run(self, input: BashInput, ctx: ToolContext) -> ToolOutput:
        if ctx.sandbox is not None:
            from toolrun.sandbox.run import run_bash

            return await run_bash(ctx.sandbox, input, ctx, self._run_shell)
        return await self._run_shell(input, ctx, None)

    async def _run_shell(
        self, input: BashInput, ctx: ToolContext, launch: Launcher | None
    ) -> ToolOutput:
        bash = _find_bash()
        if not ctx.cwd.is_dir():
            raise ToolError(f"working directory {ctx.cwd} does not exist")
        timeout_ms = input.timeout or DEFAULT_TIMEOUT_MS
        env = ctx.env if ctx.env is not None else os.environ
        if not may_change_directory(input.command, env):
            # No way for it to move the shell: skip the probe, which costs the shell
            # about as much again as a short command does.
            output, exit_code = await _run(bash, input.command, ctx.cwd, env, timeout_ms, launch)
            return ToolOutput(
                output,
                is_error=exit_code != 0,
                metadata={"exit_code": exit_code, "cwd": str(ctx.cwd)},
            )
        probe = _CwdProbe.create(env)
        try:
            output, exit_code = await _run(
                bash, input.command, ctx.cwd, probe.env, timeout_ms, launch
            )
            final_cwd = probe.read() or str(ctx.cwd)
        finally:
            probe.remove()
        return ToolOutput(
            output,
            is_error=exit_code != 0,
            metadata={"exit_code": exit_code, "cwd": final_cwd},
        )


# Words that can move a shell to another directory, directly or by running code the
# command text does not show. Matching is deliberately loose: a false alarm costs only
# the probe, a miss would lose a `cd`.
_MAY_CD = re.compile(r"\b(?:cd|pushd|popd|source|eval|exec|builtin|command)\b|(?:^|[\s;&|({`])\.\s")


def may_change_directory(command: str, env: Mapping[str, str]) -> bool:
    """Could running ``command`` leave the shell in another working directory?"""
    return bool(env.get("BASH_ENV")) or _MAY_CD.search(command) is not None


@functools.cache
def _find_bash() -> str:
    bash = shutil.which("bash") or shutil.which("bash", path=os.defpath)
    if bash is None:
        raise ToolError("bash is not installed")
    return bash


# Hide the trap from `set -x`, never fail (`set -e`), and overwrite under noclobber.
_ON_EXIT = '{ set +x; } 2>/dev/null; pwd -P >| "$__toolrun_cwd_file" 2>/dev/null || :'
_INIT = f"""\
__toolrun_cwd_file=$TOOLRUN_CWD_FILE
unset TOOLRUN_CWD_FILE BASH_ENV
if [ -n "${{TOOLRUN_USER_BASH_ENV-}}" ]; then
    # A user BASH_ENV still applies, to this shell and its children.
    export BASH_ENV=$TOOLRUN_USER_BASH_ENV
    unset TOOLRUN_USER_BASH_ENV
    . "$BASH_ENV"
fi
trap {shlex.quote(_ON_EXIT)} EXIT
"""


@functools.cache
def _probe_folder() -> Path:
    """The process's private folder: the init file and one cwd file per running call."""
    folder = Path(tempfile.mkdtemp(prefix="toolrun-bash-"))
    (folder / "init.sh").write_text(_INIT)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@dataclass(slots=True)
class _CwdProbe:
    """Where one call's shell writes its final working directory."""

    cwd_file: Path
    env: dict[str, str]

    @classmethod
    def create(cls, base_env: Mapping[str, str]) -> _CwdProbe:
        folder = _probe_folder()
        if not (folder / "init.sh").is_file():  # someone cleaned /tmp under us
            _probe_folder.cache_clear()
            folder = _probe_folder()
        env = dict(base_env)
        original = env.pop("BASH_ENV", None)
        if original:
            env["TOOLRUN_USER_BASH_ENV"] = original
        cwd_file = folder / f"cwd-{next(_call_numbers)}"
        env["TOOLRUN_CWD_FILE"] = str(cwd_file)
        env["BASH_ENV"] = str(folder / "init.sh")
        return cls(cwd_file, env)

    def read(self) -> str | None:
        try:
            text = self.cwd_file.read_text(errors="surrogateescape")
        except FileNotFoundError:
            return None
        return text.removesuffix("\n") or None

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.cwd_file.unlink()


_call_numbers = itertools.count(1)


@dataclass(slots=True)
class _Output:
    """Merged output, keeping the head and the tail when there is too much."""

    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def add(self, chunk: bytes) -> None:
        room = KEEP_HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > KEEP_TAIL_BYTES:
            extra = len(self.tail) - KEEP_TAIL_BYTES
            del self.tail[:extra]
            self.dropped += extra

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes of output omitted ...]\n" if self.dropped else ""
        return self.head.decode("utf-8", "replace") + middle + self.tail.decode("utf-8", "replace")


async def _run(
    bash: str,
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    timeout_ms: int,
    launch: Launcher | None = None,
) -> tuple[str, int]:
    """Run the command; return its merged output and exit code (128+N for signal N).

    The shell is started with a plain ``Popen`` on one pipe and watched through the
    event loop (the pipe, and a pidfd for its exit): asyncio's subprocess transport
    and child-watcher thread cost more per call than the shell itself.
    """
    argv: list[str] = [bash, "-c", command]
    fds: tuple[int, ...] = ()
    if launch is not None:  # the sandbox: bwrap ... bash -c command
        argv, env, fds = launch(argv, cwd, env)
    read_end, write_end = os.pipe()
    try:
        # Popen blocks only until the child has exec'd (vfork), as asyncio's would.
        popen = subprocess.Popen(  # noqa: ASYNC220
            argv,
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=write_end,
            cwd=cwd,
            env=env,
            start_new_session=True,
            pass_fds=fds,
        )
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
        for fd in fds:
            os.close(fd)
    os.set_blocking(read_end, False)
    child = _Child(popen)
    output = _Output()
    finished = False
    try:
        with anyio.move_on_after(timeout_ms / 1000):
            await _communicate(read_end, child, output)
            finished = True
    finally:
        with anyio.CancelScope(shield=True):
            if not finished:
                await _stop(child)
            child.close()
            os.close(read_end)
    if not finished:
        partial = output.text()[-TIMEOUT_OUTPUT_CHARS:]
        message = f"command timed out after {timeout_ms} ms"
        raise ToolTimeoutError(f"{message}; output so far:\n{partial}" if partial else message)
    code = child.returncode
    assert code is not None
    return output.text(), code if code >= 0 else 128 - code


class _Child:
    """The shell process: waited for through a pidfd (polled where there is none)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.pid = popen.pid
        try:
            self._pidfd: int | None = os.pidfd_open(popen.pid)
        except (AttributeError, OSError):  # not Linux >= 5.3
            self._pidfd = None

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    async def wait(self) -> int:
        while self.popen.returncode is None:
            if self._pidfd is not None:
                await anyio.wait_readable(self._pidfd)
            else:
                await anyio.sleep(0.005)
            # Reaps the child without blocking (Popen then forgets it cleanly).
            self.popen.poll()
        return self.popen.returncode

    def close(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


async def _communicate(read_end: int, child: _Child, output: _Output) -> None:
    """Collect output until the shell exits and the pipe closes.

    Background children that keep the pipe open longer than the grace period are
    killed with the rest of the process group.
    """
    closed = anyio.Event()

    async def pump() -> None:
        try:
            while True:
                await anyio.wait_readable(read_end)
                try:
                    chunk = os.read(read_end, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    break
                output.add(chunk)
        finally:
            closed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump)
        await child.wait()
        with anyio.move_on_after(OUTPUT_GRACE_S):
            await closed.wait()
        if not closed.is_set():
            _signal_group(child.pid, signal.SIGKILL)
            with anyio.move_on_after(OUTPUT_GRACE_S):
                await closed.wait()
            tg.cancel_scope.cancel()


async def _stop(child: _Child) -> None:
    """SIGTERM the whole process group, then SIGKILL whatever is left."""
    _signal_group(child.pid, signal.SIGTERM)
    with anyio.move_on_after(KILL_GRACE_S):
        await child.wait()
    _signal_group(child.pid, signal.SIGKILL)
    await child.wait()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
