"""Bash: run a shell command in its own session, tracking the working directory.

The shell starts with a cleaned environment (:mod:`toolrun.tools.builtins.bash_env`), and
nothing it starts outlives the call (:mod:`toolrun.reaper`).

How the working directory is tracked: bash reads the file named by ``BASH_ENV``
before it runs a ``-c`` command. One init file per toolrun process (in a private
temporary folder) unsets ``BASH_ENV`` (so child shells do not run it) and sets
an EXIT trap writing ``pwd -P`` to the file named by the call's
``TOOLRUN_CWD_FILE``, which it also unsets. Sharing the init file keeps the cost
of a call to the fork and exec: a folder per call cost more than the shell. The
command string itself is passed unchanged, so its output, exit code, line numbers
and syntax-error messages are exactly those of ``bash -c COMMAND``. Bash keeps the exit status across an EXIT trap, and
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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolrun.errors import ToolError, ToolTimeoutError
from toolrun.reaper.run import run_command
from toolrun.tempdirs import new_folder
from toolrun.tools.base import BaseTool, ToolContext, ToolKind, ToolOutput
from toolrun.tools.builtins._capture import Capture
from toolrun.tools.builtins.bash_env import shell_environment
from toolrun.tools.inputs import (
    InputSpec,
    Params,
    boolean,
    integer,
    optional,
    pydantic_models,
    string,
)
from toolrun.tools.progress import report_output

if TYPE_CHECKING:
    from toolrun.sandbox.run import Launcher
    from toolrun.stored import OutputStore

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
#: The end of the output that a timeout error message quotes.
TIMEOUT_OUTPUT_CHARS = 30_000


@dataclass(frozen=True, slots=True)
class BashParams(Params):
    """A validated Bash input (its schema and messages: :class:`BashInput`)."""

    command: str
    timeout: int | None = None
    description: str | None = None
    dangerouslyDisableSandbox: bool = False


INPUT = InputSpec(
    BashParams,
    "BashInput",
    command=string,
    timeout=optional(integer(ge=1, le=MAX_TIMEOUT_MS)),
    description=optional(string),
    dangerouslyDisableSandbox=boolean,
)


class BashTool(BaseTool[BashParams]):
    name = "Bash"
    description = (
        "Run a bash command in the working directory, which carries from call to call "
        "(`cd` persists). stdout and stderr are merged; a non-zero exit is an error."
    )
    kind = ToolKind.EXECUTE
    concurrency = "read-only input"
    input_spec = INPUT

    def is_concurrency_safe(self, input: BashParams, ctx: ToolContext | None = None) -> bool:
        return self.is_read_only(input, ctx)

    def is_read_only(self, input: BashParams, ctx: ToolContext | None = None) -> bool:
        """Whether the command is in the read-only set (fail closed: False when unsure).

        Without ``ctx`` the process's current directory stands in for both the Bash cwd
        and the workspace.
        """
        # imported here: the permission package is not needed to list or load tools
        from toolrun.permissions.readonly import is_read_only_command as check

        cwd = ctx.cwd if ctx is not None else Path.cwd()
        workspace = ctx.workspace if ctx is not None else cwd
        return bool(check(input.command, cwd, workspace))

    async def run(self, input: BashParams, ctx: ToolContext) -> ToolOutput:
        if ctx.sandbox is not None:
            from toolrun.sandbox.run import run_bash

            return await run_bash(ctx.sandbox, input, ctx, self._run_shell)
        return await self._run_shell(input, ctx, None)

    async def _run_shell(
        self, input: BashParams, ctx: ToolContext, launch: Launcher | None
    ) -> ToolOutput:
        bash = _find_bash()
        if not ctx.cwd.is_dir():
            raise ToolError(f"working directory {ctx.cwd} does not exist")
        timeout_ms = input.timeout or DEFAULT_TIMEOUT_MS
        env = shell_environment(ctx.env if ctx.env is not None else os.environ)
        if not may_change_directory(input.command, env):
            # No way for it to move the shell: skip the probe, which costs the shell
            # about as much again as a short command does.
            output, exit_code = await _run(
                bash, input.command, ctx.cwd, env, timeout_ms, launch, ctx.stored_output
            )
            return ToolOutput(
                output,
                is_error=exit_code != 0,
                metadata={"exit_code": exit_code, "cwd": str(ctx.cwd)},
            )
        probe = _CwdProbe.create(env)
        try:
            output, exit_code = await _run(
                bash, input.command, ctx.cwd, probe.env, timeout_ms, launch, ctx.stored_output
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


#: What every match of _MAY_CD holds (a word of it, or the dot): a command without any
#: is looked at without the regex, which costs several times these substring tests.
_MAY_CD_PARTS = ("cd", "pushd", "popd", "source", "eval", "exec", "builtin", "command", ".")


def may_change_directory(command: str, env: Mapping[str, str]) -> bool:
    """Could running ``command`` leave the shell in another working directory?"""
    if env.get("BASH_ENV"):
        return True
    for part in _MAY_CD_PARTS:
        if part in command:
            return _MAY_CD.search(command) is not None
    return False


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
trap {shlex.quote(_ON_EXIT)} EXIT
"""


@functools.cache
def _probe_folder() -> Path:
    """The process's private folder: the init file and one cwd file per running call."""
    folder = new_folder("toolrun-bash-")
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


async def _run(
    bash: str,
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    timeout_ms: int,
    launch: Launcher | None = None,
    store: OutputStore | None = None,
) -> tuple[str, int]:
    """Run the command; return its merged output and exit code (128+N for signal N).

    What the command leaves running is killed when it ends (:mod:`toolrun.reaper`).
    Output beyond the display goes whole to ``store`` (timed out or cancelled too).
    """
    argv: list[str] = [bash, "-c", command]
    fds: tuple[int, ...] = ()
    if launch is not None:  # the sandbox: bwrap ... bash -c command
        argv, env, fds = launch(argv, cwd, env)
    output = Capture(store)
    report_output(output.text)  # read if the call's own timeout cuts it short
    try:
        code = await run_command(
            argv,
            cwd=cwd,
            env=env,
            time_limit=timeout_ms / 1000,
            stdout=output.add,
            pass_fds={fd: fd for fd in fds},
        )
    finally:
        for fd in fds:  # copied to the side process when the command started
            os.close(fd)
        output.close()
    if code is None:
        partial = output.text()[-TIMEOUT_OUTPUT_CHARS:]
        message = f"command timed out after {timeout_ms} ms"
        raise ToolTimeoutError(f"{message}; output so far:\n{partial}" if partial else message)
    return output.text(), code if code >= 0 else 128 - code


#: the pydantic model (schemas, messages), imported with pydantic on first use
__getattr__ = pydantic_models("BashInput")
