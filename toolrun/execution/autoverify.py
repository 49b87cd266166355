"""Running the verifiers after one successful write, and what the write's result gains.

Verifier commands are spawned as hook commands are (``sh -c`` in the workspace, in a
session of their own, swept when they end: :mod:`toolrun.hooks.process`); with the
sandbox on they run under it, placed as a Bash call with the same command would be.
A verifier that cannot start, crashes, times out or prints what its format cannot read
is reported (``failed`` / ``timeout`` with a message): it never hides the edit's result.

Scope: diagnostics on the written files, on the lines the edit touched (from the diff
the write tools compute). Running each verifier before the edit too, to keep only what
is new, would double its cost and hold the edit back until it finished; and only SARIF
has fingerprints to match findings across a shifted file (ruff, mypy, pyright, eslint
and tsc give a code and a position, and the position moves with every edit).

Part of execution, not of :mod:`toolrun.verify`: it takes and gives the executor's
``Outcome``, while the config loader reads ``verify.files`` (below execution).
"""

from __future__ import annotations

import os
import shlex
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from toolrun.verify.files import WRITE_TOOLS, Touched, matching, same_file, written
from toolrun.verify.models import Diagnostic, VerifyReport
from toolrun.verify.parsers import ReportError, parse

if TYPE_CHECKING:
    from toolrun.config.models import Config, Verifier
    from toolrun.execution.invocation import Outcome
    from toolrun.hooks.process import ProcessResult
    from toolrun.sandbox.run import Launch, Launcher
    from toolrun.tools.base import ToolContext, ToolOutput

#: what of a failed verifier's stderr its message keeps
MESSAGE_CHARS = 500
#: a verifier's report beyond this is not read (cut JSON does not parse: ``failed``)
MAX_REPORT_BYTES = 16 * 1024 * 1024
#: diagnostics kept per report (a new 5000-line file can have thousands); the rest counted
MAX_DIAGNOSTICS = 200


class AutoVerify:
    """The configured verifiers of one run. Safe to share between concurrent calls."""

    def __init__(self, verifiers: Sequence[Verifier], workspace: Path) -> None:
        self.verifiers = tuple(verifiers)
        self.workspace = Path(os.path.abspath(workspace))

    @classmethod
    def of(cls, config: Config) -> AutoVerify | None:
        """None unless the config asks for verifiers (AutoVerify is off by default)."""
        if not config.toolrun.auto_verify:
            return None
        return cls(config.toolrun.auto_verify, config.workspace)

    async def after(self, tool: str, outcome: Outcome, ctx: ToolContext) -> Outcome:
        """``outcome`` with the reports of the verifiers its written files match (as
        ``metadata["verify"]``); an ``error`` when a ``block`` verifier found errors."""
        from toolrun.execution.results import Status

        if tool not in WRITE_TOOLS or outcome.status is not Status.OK:
            return outcome
        try:
            files = written(tool, outcome.metadata, ctx.resolve).files
            jobs = [(v, matching(v.files, files, self.workspace)) for v in self.verifiers]
        except Exception as exc:  # noqa: BLE001 - reported, never hides the edit's result
            why = f"could not tell which files were written: {type(exc).__name__}: {exc}"
            return with_reports(outcome, [VerifyReport("autoVerify", "failed", message=why)])
        jobs = [(v, chosen) for v, chosen in jobs if chosen]
        if not jobs:
            return outcome
        reports: list[VerifyReport | None] = [None] * len(jobs)

        async def one(i: int, verifier: Verifier, chosen: list[str]) -> None:
            reports[i] = await self.run(verifier, {f: files[f] for f in chosen}, ctx)

        if len(jobs) == 1:
            await one(0, *jobs[0])
        else:
            async with anyio.create_task_group() as tg:
                for i, (verifier, chosen) in enumerate(jobs):
                    tg.start_soon(one, i, verifier, chosen)
        done = [r for r in reports if r is not None]
        return with_reports(outcome, done)

    async def run(
        self, verifier: Verifier, files: Mapping[str, Touched], ctx: ToolContext
    ) -> VerifyReport:
        """Run one verifier on ``files`` (absolute path → touched lines) and filter."""
        start = time.monotonic()
        names = tuple(self.relative(f) for f in files)
        command = verifier.command.replace("{files}", " ".join(map(_argument, names)))
        try:
            process, warning = await self._spawn(command, verifier.timeout, ctx)
            report = self._report(verifier, process, files)
            if warning:  # the sandbox is on but could not be used: say so
                joined = f"{report.message}; {warning}" if report.message else warning
                report = replace(report, message=joined)
        except Exception as exc:  # noqa: BLE001 - a verifier's trouble never hides the edit
            report = VerifyReport(verifier.name, "failed", message=f"{type(exc).__name__}: {exc}")
        took = (time.monotonic() - start) * 1000
        return replace(report, duration_ms=took, block=verifier.block, files=names)

    def relative(self, path: str) -> str:
        return os.path.relpath(path, self.workspace)

    async def _spawn(
        self, command: str, time_limit: float, ctx: ToolContext
    ) -> tuple[ProcessResult, str]:
        """How the command ended, and a warning when the sandbox is on but was not used."""
        from toolrun.hooks.process import run_command

        env = ctx.env if ctx.env is not None else os.environ
        if ctx.sandbox is None:
            process = await run_command(
                command, b"", cwd=self.workspace, env=env, time_limit=time_limit,
                limit=MAX_REPORT_BYTES,
            )
            return process, ""
        from toolrun.sandbox.run import run_bash
        from toolrun.tools.base import ToolOutput
        from toolrun.tools.builtins.bash import BashParams

        async def execute(_: Any, __: ToolContext, launch: Launcher | None) -> ToolOutput:
            wrap: Launcher | None = None
            if launch is not None:
                sandboxed = launch

                def wrap(argv: list[str], cwd: Path, env: Mapping[str, str]) -> Launch:
                    # the sandbox's PID-1 shim re-runs its shell with bash's --posix
                    return sandboxed([shutil.which("bash") or "/bin/bash", *argv[1:]], cwd, env)

            process = await run_command(
                command, b"", cwd=self.workspace, env=env, time_limit=time_limit, launch=wrap,
                limit=MAX_REPORT_BYTES,
            )
            return ToolOutput(process.stdout, metadata={"process": process})

        # placed as a Bash call with this command would be: under bubblewrap unless
        # excludedCommands lets it out; failIfUnavailable and the rest as for Bash
        output = await run_bash(ctx.sandbox, BashParams(command=command), ctx, execute)
        found: ProcessResult = output.metadata["process"]
        where = output.metadata.get("sandbox") or {}
        warning = where.get("warning")
        return found, f"ran unsandboxed: {warning}" if warning else ""

    def _report(
        self, verifier: Verifier, process: ProcessResult, files: Mapping[str, Touched]
    ) -> VerifyReport:
        name = verifier.name
        if process.spawn_error is not None:
            return VerifyReport(name, "failed", message=f"could not start: {process.spawn_error}")
        if process.timed_out:
            return VerifyReport(
                name, "timeout", message=f"timed out after {verifier.timeout:g} s; stopped"
            )
        code = process.returncode
        if code is not None and code < 0:
            return VerifyReport(name, "failed", message=f"killed by signal {-code}{_tail(process)}")
        if process.stdout_truncated:
            return VerifyReport(
                name, "failed", message=f"its report is over {MAX_REPORT_BYTES} bytes; not read"
            )
        try:
            found = parse(verifier.format, process.stdout)
        except ReportError as exc:
            return VerifyReport(name, "failed", message=f"{exc}{_tail(process)}")
        if code and not found:
            # a linter that fails with findings exits non-zero; one with none has crashed
            return VerifyReport(name, "failed", message=f"exit code {code}{_tail(process)}")
        kept = self._filter(found, files)
        more = len(kept) - MAX_DIAGNOSTICS
        note = f"{more} more diagnostics not shown" if more > 0 else ""
        return VerifyReport(name, "found" if kept else "ok", tuple(kept[:MAX_DIAGNOSTICS]), note)

    def _filter(
        self, found: Sequence[Diagnostic], files: Mapping[str, Touched]
    ) -> list[Diagnostic]:
        """The diagnostics on the written files, on lines the edit touched (one without a
        line is about the whole file: kept), each with its path relative to the workspace."""
        by_path: dict[str, Touched] = {}
        for path, lines in files.items():
            by_path[os.path.normpath(path)] = lines
            by_path.setdefault(os.path.realpath(path), lines)
        kept = []
        for d in found:
            path = same_file(d.file, self.workspace)
            if path not in by_path:
                path = os.path.realpath(path)
                if path not in by_path:
                    continue
            lines = by_path[path]
            if lines is None or d.line == 0 or d.line in lines:
                kept.append(replace(d, file=self.relative(path)))
        return kept


def with_reports(outcome: Outcome, reports: Sequence[VerifyReport]) -> Outcome:
    """The outcome carrying ``reports``; an error when a ``block`` verifier found errors."""
    from toolrun.execution.results import Status

    metadata = {**outcome.metadata, "verify": [r.as_json() for r in reports]}
    blocking = [(r, d) for r in reports if r.block for d in r.errors]
    if not blocking:
        return replace(outcome, metadata=metadata)
    report, first = blocking[0]
    n = len(blocking)
    error = (
        f"autoVerify: {n} new error{'s' if n != 1 else ''} ({report.verifier}: "
        f"{first.file}:{first.line}:{first.column}: {first.code + ' ' if first.code else ''}"
        f"{first.message}{', ...' if n > 1 else ''}); the edit was written"
    )
    return replace(outcome, status=Status.ERROR, error=error, metadata=metadata)


def _argument(name: str) -> str:
    """A file name as one shell word that no program reads as an option."""
    return shlex.quote(f"./{name}" if name.startswith("-") else name)


def _tail(process: ProcessResult) -> str:
    text = (process.stderr.strip() or process.stdout.strip())[-MESSAGE_CHARS:]
    return f": {text}" if text else ""
