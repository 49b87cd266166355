"""The executor: plans in, exactly one result per call out, in plan order, as soon as possible.

For each turn: admit at most ``max_calls_per_turn`` calls, partition the rest
into runs, decide every call of a run before it starts (asks one at a time, in
plan order), then run it — a concurrent run as a task group under the capacity
limiters, an exclusive run alone. Results go to ``on_result`` in plan order once
every earlier call of the plan has its result, at the next scheduling tick: the
journal takes the tick's records in one write first (so what was shown is in it),
then ``on_result`` gets each result and ``on_flush`` is called once.

The executor is built in layers, each a module of its own, each using only those below it:
:mod:`~toolrun.execution.scheduling` (turns, runs, capacity) on
:mod:`~toolrun.execution.launching` (one call: slot, locks, jail, verify) on
:mod:`~toolrun.execution.asking` (decisions, hooks, prompts) on
:mod:`~toolrun.execution.bookkeeping` (results, ids, the journal's records) on
:mod:`~toolrun.execution.delivery` (results in order, once per tick); with
:mod:`~toolrun.execution.plan_state` (what is kept of a plan as it runs) and
:mod:`~toolrun.execution.settings`. This module keeps the public entry points:
:class:`Executor` and the names its callers import from here.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from toolrun.execution.asking import AskAnswer, AskHandler, Decider, ask_reason
from toolrun.execution.bookkeeping import _ids, new_execution_id, started_line, started_record
from toolrun.execution.capacity import Capacity
from toolrun.execution.delivery import FlushSink, ResultSink, _Ordered
from toolrun.execution.hook_events import HookStops, session_hooks
from toolrun.execution.jailing import JailKeeper, edit_denies, literal_denies, read_denied
from toolrun.execution.journal import Journal
from toolrun.execution.locks import FileLocks
from toolrun.execution.plan_state import _PlanState
from toolrun.execution.results import DecidedBy, Result, Status
from toolrun.execution.scheduling import RunSink, _Scheduling
from toolrun.execution.settings import ExecSettings
from toolrun.plan.models import Plan, Turn
from toolrun.tools.registry import ToolRegistry
from toolrun.verify.files import WRITE_TOOLS

if TYPE_CHECKING:
    from toolrun.execution.autoverify import AutoVerify
    from toolrun.hooks import HookRunner
    from toolrun.sandbox.policy import SandboxPolicy

__all__ = [
    "AskAnswer",
    "AskHandler",
    "Decider",
    "ExecSettings",
    "Executor",
    "FlushSink",
    "ResultSink",
    "RunSink",
    "_Ordered",
    "_PlanState",
    "_ids",
    "ask_reason",
    "new_execution_id",
    "started_line",
    "started_record",
]


class Executor(_Scheduling):
    def __init__(
        self,
        *,
        workspace: Path,
        registry: ToolRegistry,
        decider: Decider,
        settings: ExecSettings,
        run_id: str,
        on_result: ResultSink | None = None,
        ask: AskHandler | None = None,
        journal: Journal | None = None,
        additional_directories: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
        hooks: HookRunner | None = None,
        read_veto: Callable[[Path], str | None] | None = None,
        on_run: RunSink | None = None,
        private_hosts: frozenset[str] = frozenset(),
        sandbox: SandboxPolicy | None = None,
        verify: AutoVerify | None = None,
        on_flush: FlushSink | None = None,
    ) -> None:
        self.workspace = workspace.resolve()
        self.registry = registry
        self.decider = decider
        self.settings = settings
        self.run_id = run_id
        self.on_result = on_result
        self.on_flush = on_flush
        self._ask = ask
        self.journal = journal
        self._roots = (self.workspace, *(p.resolve() for p in additional_directories))
        self._env = env
        self._read_veto = read_veto
        self._private_hosts = private_hosts
        self._sandbox = sandbox
        self.verify = verify
        self.verify_tools = WRITE_TOOLS if verify is not None else frozenset()
        self.hooks = hooks
        self._on_run = on_run
        self.locks = FileLocks()
        self.capacity = Capacity(settings.max_concurrency, settings.kind_limits)
        self.interrupted = False
        #: a hook's ``continue: false`` (or PostToolBatch block): nothing more starts
        self.stops = HookStops()
        self._active: set[anyio.CancelScope] = set()
        self._ask_lock = anyio.Lock()
        self._unshown: list[Result] = []  # delivered, for on_result at the next tick
        self._tick_due = False
        self._sink_error: BaseException | None = None
        # the journal whose stored-outputs folder was worked out, and the folder
        self._stored_dir: tuple[Journal | None, Path] = (None, Path())
        self._first_decided = False  # (see _Scheduling._decide_first)
        self._hooks_decide = hooks is not None and hooks.has_hooks("PreToolUse")
        engine = getattr(decider, "engine", None)
        self.jails = JailKeeper(
            self._roots, read_denied(engine), also=literal_denies(engine),
            read_only=edit_denies(engine), wanted=_enforcing(engine),
        )

    # -- public -----------------------------------------------------------------------------

    def interrupt(self) -> None:
        """Ctrl-C: cancel what runs or waits; every call not yet finished becomes interrupted."""
        self.interrupted = True
        for scope in list(self._active):
            scope.cancel()

    async def run(self, plans: Sequence[Plan]) -> list[list[Result]]:
        """Run plans side by side (``jobs`` at a time); results per plan, in plan order."""
        states: list[_PlanState] = []
        jobs = max(1, min(self.settings.jobs, len(plans)))
        for plan in plans:
            results: list[Result] = []
            state = _PlanState(
                plan=plan,
                out=_Ordered(partial(self._deliver, acc=results)),
                cwd=self.workspace,
                limiter=self.capacity.plan_limiter(jobs),
                results=results,
            )
            states.append(state)
        try:
            async with self._session():
                if jobs == 1:
                    for state in states:
                        await self._run_plan(state)
                else:
                    plan_slots = anyio.CapacityLimiter(jobs)

                    async def one(state: _PlanState) -> None:
                        async with plan_slots:
                            await self._run_plan(state)

                    async with anyio.create_task_group() as tg:
                        for state in states:
                            tg.start_soon(one, state)
        finally:
            self._tick()
            self.jails.close()  # (the jail's processes end with the run)
        self._raise_sink_error()
        return [s.results for s in states]

    async def run_stream(
        self,
        file: str,
        turns: AsyncIterator[tuple[Turn, Sequence[Result]]],
        first_index: int = 0,
        *,
        keep: bool = True,
    ) -> list[Result]:
        """Run turns as they arrive (``exec -``). Each item is a turn and the results of
        the lines that could not become calls, which take their place in the order.
        ``first_index``: the index of the first call (a part of a plan starts later).
        ``keep=False``: results go to ``on_result`` only, so memory stays flat."""
        results: list[Result] = []
        state = _PlanState(
            plan=Plan(file, None, ()),
            out=_Ordered(partial(self._deliver, acc=results if keep else None), first_index),
            cwd=self.workspace,
            limiter=None,
            results=results,
        )
        try:
            async with self._session():
                async for turn, invalid in turns:
                    for result in invalid:
                        state.out.put(result)
                    if self.interrupted:
                        for call in turn.calls:
                            state.out.put(self._interrupted_before(state, call))
                    else:
                        await self._run_turn(state, turn)
                    if self.interrupted:
                        break  # lines not read yet are not calls: they get no result
        finally:
            self._tick()
            self.jails.close()  # (the jail's processes end with the run)
        self._raise_sink_error()
        return results

    def _session(self) -> contextlib.AbstractAsyncContextManager[None]:
        """SessionStart, Stop and SessionEnd hooks around the run (hook_events)."""
        return session_hooks(self.hooks, self.stops, self, dry_run=self.settings.dry_run)

    def invalid_result(self, file: str, index: int, call_id: str, error: str) -> Result:
        """The result of a stream line that is not a valid call: it never runs."""
        return Result(
            index=index,
            id=call_id,
            execution_id=new_execution_id(),
            run_id=self.run_id,
            plan=file,
            tool="",
            input={},
            decision="deny",
            decided_by=DecidedBy("invalid"),
            status=Status.ERROR,
            error=error,
            aborted_before_launch=True,
        )


def _enforcing(engine: object) -> bool:
    """Whether the engine judges calls into jails (``toolrun.enforce`` is not off)."""
    config = getattr(engine, "config", None)
    return getattr(getattr(config, "toolrun", None), "enforce", "auto") != "off"
