"""The exec command as a library function: load, decide, run, report."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, NoReturn, TypeVar

import anyio
import anyio.abc

from toolrun import __version__
from toolrun.errors import ExitCode, Problem
from toolrun.execution.executor import AskHandler, ExecSettings, Executor, FlushSink, ResultSink
from toolrun.execution.journal import Journal, new_run_id, runs_dir
from toolrun.execution.results import Result
from toolrun.plan.models import Plan
from toolrun.report.exec import ExecReport, Tally

if TYPE_CHECKING:
    from toolrun.commands.exec_stdin import StdinCalls
    from toolrun.config.models import Config
    from toolrun.execution.autoverify import AutoVerify
    from toolrun.execution.decide import EngineDecider
    from toolrun.execution.executor import Decider
    from toolrun.tools.registry import ToolRegistry


T = TypeVar("T")
GC_YOUNG_THRESHOLD = 10_000  # allocations between young collections during a run
#: The signals that interrupt a run (SIGHUP: its terminal closed).
INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _interrupts() -> tuple[signal.Signals, ...]:
    """INTERRUPTS, less SIGHUP when it is ignored: under ``nohup`` the run goes on."""
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        return tuple(s for s in INTERRUPTS if s != signal.SIGHUP)
    return INTERRUPTS


@dataclass(frozen=True, slots=True)
class ExecRequest:
    """What ``exec`` is asked to do: the plans, the workspace and config, and the options."""

    plans: Sequence[Path]
    workspace: Path = Path(".")
    config_file: Path | None = None
    settings_files: Sequence[Path] = ()
    mode: str | None = None
    #: --enforce: overrides toolrun.enforce (None: the config's)
    enforce: str | None = None
    dry_run: bool = False
    jobs: int = 1
    max_concurrency: int | None = None
    ask_default: Literal["deny", "allow"] = "deny"
    journal: bool = True
    hooks: bool = True
    #: False: the report holds no results, only their tally (counts and exit code), so a
    #: long ``exec -`` stream runs in memory that does not grow with it
    keep_results: bool = True
    #: --from: every plan read as this format (None: each one's detected)
    source_format: str | None = None
    #: --transcript-cwd: where the sessions were recorded (None: the cwd they record)
    transcript_cwd: str | None = None
    #: --allow-empty: a plan without calls (or of no format toolrun reads) is not invalid
    allow_empty: bool = False


def execute(
    request: ExecRequest,
    *,
    on_result: ResultSink | None = None,
    ask: AskHandler | None = None,
    on_plans: Callable[[Sequence[Plan]], None] | None = None,
    stdin: BinaryIO | None = None,
    on_flush: FlushSink | None = None,
) -> ExecReport:
    """Validate everything first (ConfigError/PlanError: nothing runs), then run the plans.

    ``on_result`` gets each result in plan order, a tick's worth at a time, each already
    in the journal; ``on_flush`` is called after each tick's results (flush output there).
    """
    from toolrun.config import load_config
    from toolrun.errors import UsageError
    from toolrun.reaper.link import prestart
    from toolrun.tools import default_registry

    if not request.dry_run:
        prestart()  # the reaper side process starts while the config and plans load
    config = load_config(
        workspace=request.workspace,
        config_file=request.config_file,
        settings_files=request.settings_files,
        mode=request.mode,
        enforce=request.enforce,
    )
    registry = default_registry()
    streaming = any(str(p) == "-" for p in request.plans)
    if streaming and len(request.plans) > 1:
        raise UsageError("'-' (calls on stdin) cannot be combined with plan files")
    session = _Session(request, config, registry, streaming, on_result, ask, on_plans, stdin)
    session.on_flush = on_flush
    results = anyio.run(session.run)
    flat = tuple(r for plan_results in results for r in plan_results)
    return ExecReport(
        run_id=session.run_id,
        plans=("-",) if streaming else tuple(p.file for p in session.plans),
        results=tuple(tuple(r) for r in results),
        wall_ms=session.wall_ms,
        interrupted=session.interrupted,
        journal_path=session.journal.path if session.journal is not None else None,
        dry_run=request.dry_run,
        all_results=flat,
        output_error=session.output_error,
        unread_lines=session.unread_lines,
        journal_error=session.journal_error,
        sources=config.sources(),
        config_warnings=config.warnings,
        config_notes=config.notes,
        tally=session.tally,
        enforced=session.enforced,
        enforced_reason=session.enforced_reason,
        warnings=tuple(session.input_warnings),
        hangup=session.hangup,
        stopped=session.stopped,
    )


class _Session:
    """One exec, inside one event loop: MCP servers (which live in the loop that started
    them) come up before the plans are validated and go down after the last call."""

    def __init__(
        self,
        request: ExecRequest,
        config: Config,
        registry: ToolRegistry,
        streaming: bool,
        on_result: ResultSink | None,
        ask: AskHandler | None,
        on_plans: Callable[[Sequence[Plan]], None] | None,
        stdin: BinaryIO | None,
    ) -> None:
        self.request = request
        self.config = config
        self.registry = registry
        self.streaming = streaming
        self.on_result = on_result
        self.ask = ask
        self.on_plans = on_plans
        self.stdin = stdin
        self.run_id = new_run_id()
        self.plans: list[Plan] = []
        self.journal: Journal | None = None
        self.wall_ms = 0.0
        self.interrupted = False
        self.output_error: str | None = None
        self.journal_error: str | None = None
        self.executor: Executor | None = None
        self.stdin_calls: StdinCalls | None = None
        self.started = 0.0
        self.interrupt_requested = False
        self.hangup = False  # the first interrupt was SIGHUP
        self.unread_lines = 0
        self.tally = Tally()
        self.on_flush: FlushSink | None = None
        self.enforced: bool | None = None
        self.enforced_reason: str | None = None
        #: records of a session that were skipped (unreadable lines, unknown types)
        self.input_warnings: list[Problem] = []
        self.stopped: Mapping[str, Any] | None = None

    async def run(self) -> list[list[Result]]:
        # Signals are watched from start to end, MCP servers' start and shutdown included,
        # so a second Ctrl-C always exits at once.
        if not self.config.mcp_servers:
            return await self._with_signals(self._run())
        from toolrun.tools.mcp import start_mcp_tools

        async def with_servers() -> list[list[Result]]:
            async with start_mcp_tools(self.config, self.registry):
                return await self._run()

        return await self._with_signals(with_servers())

    async def _run(self) -> list[list[Result]]:
        from toolrun.execution.decide import EngineDecider
        from toolrun.paths import display_path
        from toolrun.permissions import PermissionEngine
        from toolrun.plan.sources import InputOptions, load_sources

        request, config, registry = self.request, self.config, self.registry
        if not self.streaming:
            # a plan, or a session replayed: loaded as check and validate load it
            loaded = load_sources(
                request.plans,
                registry,
                display=display_path,
                workspace=config.workspace,
                options=InputOptions(
                    request.source_format, request.transcript_cwd, request.allow_empty
                ),
                max_calls_per_turn=config.toolrun.max_calls_per_turn,
            )
            self.plans = [imported.plan for imported in loaded]
            self.input_warnings = [w for imported in loaded for w in imported.warnings]
        # a dry run marks what earlier calls may change, from what each decision read:
        # a remembered decision would not say (``toolrun.execution.depends``)
        engine = PermissionEngine(config, registry, memo=not request.dry_run)
        settings = ExecSettings(
            max_concurrency=request.max_concurrency or config.toolrun.max_concurrency,
            kind_limits=dict(config.toolrun.kind_limits),
            max_calls_per_turn=config.toolrun.max_calls_per_turn,
            sibling_abort_on_bash_error=config.toolrun.sibling_abort_on_bash_error,
            dry_run=request.dry_run,
            ask_default=request.ask_default,
            jobs=request.jobs,
            max_stored_output=config.toolrun.max_stored_output,
        )
        hooks = None
        if request.hooks and config.hooks:
            from toolrun.hooks import HookRunner

            transcript = runs_dir(config.workspace) / f"{self.run_id}.jsonl"
            hooks = HookRunner(
                config,
                run_id=self.run_id,
                registry=registry,
                transcript_path=str(transcript) if request.journal else None,
            )
        executor = Executor(
            workspace=config.workspace,
            registry=registry,
            decider=_decider(EngineDecider(engine), request.dry_run),
            settings=settings,
            run_id=self.run_id,
            on_result=self.on_result,
            ask=self.ask,
            journal=None,  # opened below, just before the run, so it is always closed
            additional_directories=config.additional_directories,
            hooks=hooks,
            read_veto=engine.read_veto,
            private_hosts=engine.private_hosts(),
            sandbox=engine.sandbox,
            verify=_auto_verify(config, request.dry_run),
        )
        self.executor = executor
        if self.interrupt_requested:  # Ctrl-C while MCP servers started: run nothing
            executor.interrupt()
        started = self.started = time.time()
        journal = None
        if request.journal and not request.dry_run:
            # Before anything is shown or runs: a journal that cannot be written is exit 3.
            journal = self.journal = executor.journal = Journal.start(
                runs_dir(config.workspace) / f"{self.run_id}.jsonl",
                {
                    "event": "run",
                    "run_id": self.run_id,
                    "toolrun": __version__,
                    "started_at": started,
                    "workspace": str(config.workspace),
                    "mode": config.default_mode,
                    "plans": ["-"] if self.streaming else [p.file for p in self.plans],
                    "config_files": [str(f) for f in config.files],
                },
            )
        executor.on_result = self._seen
        executor.on_flush = self._flush
        if self.on_plans is not None:
            self.on_plans(self.plans)
        # The plans, config and modules live for the whole run: keep the collector from
        # walking them again each time results pile up (a few percent on 10,000 reads),
        # and let it run a tenth as often: each call makes a few dozen objects that live
        # until its result is out, so the default (700) collects every few calls.
        gc.freeze()
        thresholds = gc.get_threshold()
        gc.set_threshold(GC_YOUNG_THRESHOLD, *thresholds[1:])
        try:
            if self.streaming:
                from toolrun.commands.exec_stdin import StdinCalls

                self.stdin_calls = StdinCalls(executor, registry, self.stdin or sys.stdin.buffer)
                turns = self.stdin_calls.turns()
                try:
                    return [await executor.run_stream("-", turns, keep=request.keep_results)]
                finally:
                    await turns.aclose()
            return await executor.run(self.plans)
        finally:
            self.wall_ms = (time.time() - started) * 1000
            self.interrupted = executor.interrupted
            stop = executor.stops.request
            self.stopped = stop.to_json() if stop is not None else None
            self._enforcement()
            if self.stdin_calls is not None:  # counted once: the reader may still be reading
                self.unread_lines = self.stdin_calls.unread
            gc.set_threshold(*thresholds)
            gc.unfreeze()
            if journal is not None:
                journal.write(self._end_record())
                journal.close()
                self.journal_error = journal.failure

    def _enforcement(self) -> None:
        """What the run can claim of its jails (#25): from what its calls' results
        recorded, else (a dry run, no judged call ran) from the jail keeper's probe."""
        jails = self.executor.jails if self.executor is not None else None
        tally = self.tally
        if tally.unjailed is not None or (jails is not None and jails.enforced is False):
            self.enforced = False
            self.enforced_reason = (jails.unavailable if jails is not None else None) or \
                tally.unjailed
        elif tally.jailed or (jails is not None and jails.enforced):
            self.enforced, self.enforced_reason = True, None

    def _end_record(self, **extra: object) -> dict[str, object]:
        return {
            "event": "end",
            "run_id": self.run_id,
            "wall_ms": self.wall_ms,
            "interrupted": self.interrupted,
            **({"stopped": self.stopped} if self.stopped else {}),
            "enforced": self.enforced,
            "enforced_reason": self.enforced_reason,
            **({"unread_lines": self.unread_lines} if self.stdin_calls is not None else {}),
            **({"output_error": self.output_error} if self.output_error else {}),
            **extra,
        }

    def _interrupt(self) -> None:
        """Stop: cancel what runs, run nothing more, read no more of stdin."""
        self.interrupt_requested = True
        if self.executor is not None:
            self.executor.interrupt()
        if self.stdin_calls is not None:
            self.stdin_calls.stop()

    def _exit_now(self) -> NoReturn:
        """A second Ctrl-C: leave at once, the journal ended with what it has."""
        if self.journal is not None and not self.journal.closed:
            self.wall_ms = (time.time() - self.started) * 1000
            self.interrupted = True
            self._enforcement()
            if self.stdin_calls is not None:
                self.unread_lines = self.stdin_calls.unread
            self.journal.write(self._end_record(forced=True))
        _kill_child_groups()
        os._exit(int(ExitCode.HANGUP if self.hangup else ExitCode.INTERRUPTED))

    async def _with_signals(self, work: Awaitable[T]) -> T:
        """Ctrl-C, SIGTERM and SIGHUP (the terminal closed) interrupt the run instead of
        tearing the loop down, so every call that was read gets its result and the
        journal is complete; a second one exits at once."""

        async def watch(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            with anyio.open_signal_receiver(*_interrupts()) as signals:
                task_status.started()
                async for received in signals:
                    if self.interrupt_requested:
                        self._exit_now()
                    self.hangup = received == signal.SIGHUP
                    self._interrupt()

        try:
            async with anyio.create_task_group() as tg:
                # signal handlers can only be installed from the main thread
                if threading.current_thread() is threading.main_thread():
                    await tg.start(watch)  # installed before anything runs
                result = await work
                tg.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # the watcher never fails: what the work raised propagates as it is
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        return result

    def _seen(self, result: Result) -> None:
        """Count a result, then hand it to the caller's sink; output that fails (stdout
        closed, disk full) stops showing but not journalling: the rest is interrupted."""
        self.tally.add(result)
        if self.output_error is not None or self.on_result is None:
            return
        try:
            self.on_result(result)
        except OSError as exc:
            self._output_failed(exc)

    def _flush(self) -> None:
        if self.output_error is not None or self.on_flush is None:
            return
        try:
            self.on_flush()
        except OSError as exc:
            self._output_failed(exc)

    def _output_failed(self, exc: OSError) -> None:
        self.output_error = f"output failed: {exc.strerror or exc}"
        self._interrupt()


def _kill_child_groups() -> None:
    """SIGKILL the process group of every child of toolrun that leads one (Bash calls,
    hooks and MCP servers each start in a session of their own), so leaving at once
    leaves nothing running. Linux: children are found in /proc. The reaper's side process
    is spared: when toolrun exits it sees its control socket close and kills everything it
    started, which it alone can find once a command has detached."""
    from toolrun.reaper.link import side_pid

    me, spared = str(os.getpid()), side_pid()
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    # after the command name, which may hold spaces: state ppid pgrp ...
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            pid, ppid, pgrp = int(entry.name), fields[1].decode(), int(fields[2])
            if ppid == me and pgrp == pid and pid != spared:
                with contextlib.suppress(OSError):
                    os.killpg(pgrp, signal.SIGKILL)


def _decider(inner: EngineDecider, dry_run: bool) -> Decider:
    """exec decides each call right before it runs; a dry run marks an allow that an
    earlier call, had it run, may have changed."""
    if not dry_run:
        return inner
    from toolrun.execution.depends import DryRunDecider

    return DryRunDecider(inner)


def _auto_verify(config: Config, dry_run: bool) -> AutoVerify | None:
    """``toolrun.autoVerify``'s verifiers, when the config has any (a dry run writes nothing)."""
    if dry_run or not config.toolrun.auto_verify:
        return None
    from toolrun.execution.autoverify import AutoVerify as Verify

    return Verify.of(config)
