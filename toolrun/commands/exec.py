"""The exec command as a library function: load, decide, run, report."""

from __future__ import annotations

import contextlib
import gc
import math
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal, TypeVar

import anyio

from toolrun import __version__
from toolrun.errors import ExitCode
from toolrun.execution.executor import AskHandler, ExecSettings, Executor, ResultSink
from toolrun.execution.journal import Journal, new_run_id
from toolrun.execution.results import Result, Status
from toolrun.plan.models import Call, Plan, Turn

if TYPE_CHECKING:
    from toolrun.config.models import Config
    from toolrun.tools.registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class ExecRequest:
    plans: Sequence[Path]
    workspace: Path = Path(".")
    config_file: Path | None = None
    settings_files: Sequence[Path] = ()
    mode: str | None = None
    dry_run: bool = False
    jobs: int = 1
    max_concurrency: int | None = None
    ask_default: Literal["deny", "allow"] = "deny"
    journal: bool = True
    hooks: bool = True


@dataclass(frozen=True, slots=True)
class ExecReport:
    run_id: str
    plans: tuple[str, ...]
    results: tuple[tuple[Result, ...], ...]
    wall_ms: float
    interrupted: bool
    journal_path: Path | None = None
    dry_run: bool = False
    all_results: tuple[Result, ...] = field(default=())

    @property
    def exit_code(self) -> ExitCode:
        return exit_code_for(self.all_results, interrupted=self.interrupted)


def exit_code_for(results: Sequence[Result], *, interrupted: bool = False) -> ExitCode:
    codes: set[ExitCode] = set()
    if interrupted:
        codes.add(ExitCode.INTERRUPTED)
    for r in results:
        if r.status is Status.INTERRUPTED:
            codes.add(ExitCode.INTERRUPTED)
        elif r.status is Status.DENIED:
            codes.add(ExitCode.DENIED if r.decision == "deny" else ExitCode.ASK)
        elif r.status is Status.NEEDS_APPROVAL or (
            r.status is Status.SKIPPED and r.decision == "ask"
        ):
            codes.add(ExitCode.ASK)
        elif r.status is Status.ERROR and r.decided_by.kind == "invalid":
            codes.add(ExitCode.INVALID)  # a line of `exec -` that is not a valid call
        elif r.status in (Status.ERROR, Status.TIMEOUT, Status.CANCELLED):
            codes.add(ExitCode.FAILED)
    return ExitCode.combine(codes)


def execute(
    request: ExecRequest,
    *,
    on_result: ResultSink | None = None,
    ask: AskHandler | None = None,
    on_plans: Callable[[Sequence[Plan]], None] | None = None,
    stdin: BinaryIO | None = None,
) -> ExecReport:
    """Validate everything first (ConfigError/PlanError: nothing runs), then run the plans."""
    from toolrun.config import load_config
    from toolrun.errors import UsageError
    from toolrun.tools import default_registry

    config = load_config(
        workspace=request.workspace,
        config_file=request.config_file,
        settings_files=request.settings_files,
        mode=request.mode,
    )
    registry = default_registry()
    streaming = any(str(p) == "-" for p in request.plans)
    if streaming and len(request.plans) > 1:
        raise UsageError("'-' (calls on stdin) cannot be combined with plan files")
    session = _Session(request, config, registry, streaming, on_result, ask, on_plans, stdin)
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

    async def run(self) -> list[list[Result]]:
        if not self.config.mcp_servers:
            return await self._run()
        from toolrun.tools.mcp import start_mcp_tools

        async with start_mcp_tools(self.config, self.registry):
            return await self._run()

    async def _run(self) -> list[list[Result]]:
        from toolrun.execution.decide import EngineDecider
        from toolrun.paths import display_path
        from toolrun.permissions import PermissionEngine
        from toolrun.plan import load_plans

        request, config, registry = self.request, self.config, self.registry
        if not self.streaming:
            self.plans = load_plans(request.plans, registry, display=display_path)
        engine = PermissionEngine(config, registry)
        settings = ExecSettings(
            max_concurrency=request.max_concurrency or config.toolrun.max_concurrency,
            kind_limits=dict(config.toolrun.kind_limits),
            max_calls_per_turn=config.toolrun.max_calls_per_turn,
            sibling_abort_on_bash_error=config.toolrun.sibling_abort_on_bash_error,
            dry_run=request.dry_run,
            ask_default=request.ask_default,
            jobs=request.jobs,
        )
        hooks = None
        if request.hooks and config.hooks:
            from toolrun.hooks import HookRunner

            hooks = HookRunner(config, run_id=self.run_id, registry=registry)
        executor = Executor(
            workspace=config.workspace,
            registry=registry,
            decider=EngineDecider(engine),
            settings=settings,
            run_id=self.run_id,
            on_result=self.on_result,
            ask=self.ask,
            journal=None,  # opened below, just before the run, so it is always closed
            additional_directories=config.additional_directories,
            hooks=hooks,
            read_veto=engine.read_veto,
        )
        if self.on_plans is not None:
            self.on_plans(self.plans)
        started = time.time()
        journal = None
        if request.journal and not request.dry_run:
            journal = self.journal = executor.journal = Journal.for_run(
                config.workspace, self.run_id
            )
            journal.write(
                {
                    "event": "run",
                    "run_id": self.run_id,
                    "toolrun": __version__,
                    "started_at": started,
                    "workspace": str(config.workspace),
                    "mode": config.default_mode,
                    "plans": ["-"] if self.streaming else [p.file for p in self.plans],
                    "config_files": [str(f) for f in config.files],
                }
            )
        # The plans, config and modules live for the whole run: keep the collector from
        # walking them again each time results pile up (a few percent on 10,000 reads).
        gc.freeze()
        try:
            if self.streaming:
                stdin = self.stdin or sys.stdin.buffer
                turns = _stdin_turns(executor, registry, stdin)
                return [await _with_signals(executor, executor.run_stream("-", turns))]
            return await _with_signals(executor, executor.run(self.plans))
        finally:
            self.wall_ms = (time.time() - started) * 1000
            self.interrupted = executor.interrupted
            gc.unfreeze()
            if journal is not None:
                journal.write(
                    {
                        "event": "end",
                        "run_id": self.run_id,
                        "wall_ms": self.wall_ms,
                        "interrupted": executor.interrupted,
                    }
                )
                journal.close()


T = TypeVar("T")


async def _with_signals(executor: Executor, work: Awaitable[T]) -> T:
    """Ctrl-C (and SIGTERM) interrupt the executor instead of tearing the loop down,
    so every call still gets its result and the journal is complete."""

    async def watch() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                executor.interrupt()

    async with anyio.create_task_group() as tg:
        # signal handlers can only be installed from the main thread
        if threading.current_thread() is threading.main_thread():
            tg.start_soon(watch)
        result = await work
        tg.cancel_scope.cancel()
    return result


async def _stdin_turns(
    executor: Executor, registry: ToolRegistry, stdin: BinaryIO
) -> AsyncIterator[tuple[Turn, list[Result]]]:
    import anyio.from_thread
    import anyio.lowlevel

    from toolrun.errors import Location, PlanError
    from toolrun.plan.loader import call_from_json_line

    send, receive = anyio.create_memory_object_stream[tuple[int, bytes]](math.inf)
    token = anyio.lowlevel.current_token()

    def reader() -> None:
        # A plain daemon thread: a read blocked on a silent pipe must not keep toolrun alive.
        with contextlib.suppress(Exception):
            for number, raw in enumerate(stdin, start=1):
                anyio.from_thread.run_sync(send.send_nowait, (number, raw), token=token)
        with contextlib.suppress(Exception):
            anyio.from_thread.run_sync(send.close, token=token)

    threading.Thread(target=reader, name="stdin-calls", daemon=True).start()
    limit = executor.settings.max_calls_per_turn
    seen_ids: dict[str, Location] = {}
    index = 0
    turn = 0
    async with receive:
        while True:
            try:
                batch = [await receive.receive()]
            except anyio.EndOfStream:
                return
            while len(batch) < limit:
                try:
                    batch.append(receive.receive_nowait())
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break
            calls: list[Call] = []
            invalid: list[Result] = []
            for number, raw in batch:
                text = raw.decode("utf-8", "replace").strip()
                if not text:
                    continue
                try:
                    calls.append(
                        call_from_json_line(
                            text,
                            file="-",
                            line=number,
                            index=index,
                            turn=turn,
                            registry=registry,
                            seen_ids=seen_ids,
                        )
                    )
                except PlanError as exc:
                    error = "; ".join(str(p) for p in exc.problems)
                    invalid.append(executor.invalid_result("-", index, f"line-{number}", error))
                index += 1
            yield Turn(turn, tuple(calls), Location("-", batch[0][0], 1)), invalid
            turn += 1
