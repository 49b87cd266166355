"""The executor: plans in, exactly one result per call out, in plan order, as soon as possible.

For each turn: admit at most ``max_calls_per_turn`` calls, partition the rest
into runs, decide every call of a run before it starts (asks one at a time, in
plan order), then run it — a concurrent run as a task group under the capacity
limiters, an exclusive run alone. Results go to ``on_result`` in plan order the
moment every earlier call of the plan has its result.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

import anyio

from toolrun.execution.capacity import Capacity
from toolrun.execution.invocation import Outcome, invoke
from toolrun.execution.journal import Journal
from toolrun.execution.locks import FileLocks
from toolrun.execution.partition import partition
from toolrun.execution.results import CallDecision, DecidedBy, Result, Status
from toolrun.plan.models import Call, Plan
from toolrun.tools.base import Tool, ToolContext, ToolKind
from toolrun.tools.registry import ToolRegistry

AskAnswer = Literal["yes", "no", "always"]
AskHandler = Callable[[Call, CallDecision], Awaitable[AskAnswer]]
ResultSink = Callable[[Result], None]


class Decider(Protocol):
    """The permission decision for one call (the one decision path exec and check share)."""

    def decide(self, call: Call, cwd: Path) -> CallDecision: ...


@dataclass(frozen=True, slots=True)
class ExecSettings:
    max_concurrency: int = 10
    kind_limits: Mapping[str, int] = field(default_factory=dict)
    max_calls_per_turn: int = 64
    sibling_abort_on_bash_error: bool = False
    dry_run: bool = False
    ask_default: Literal["deny", "allow"] = "deny"
    jobs: int = 1


class _Ordered:
    """Releases results in index order as soon as every earlier one is in."""

    def __init__(self, sink: ResultSink) -> None:
        self._sink = sink
        self._next = 0
        self._pending: dict[int, Result] = {}

    def put(self, result: Result) -> None:
        self._pending[result.index] = result
        while self._next in self._pending:
            self._sink(self._pending.pop(self._next))
            self._next += 1


@dataclass
class _PlanState:
    plan: Plan
    out: _Ordered
    cwd: Path
    limiter: anyio.CapacityLimiter | None
    results: list[Result] = field(default_factory=list)


class Executor:
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
    ) -> None:
        self.workspace = workspace.resolve()
        self.registry = registry
        self.decider = decider
        self.settings = settings
        self.run_id = run_id
        self._on_result = on_result
        self._ask = ask
        self._journal = journal
        self._roots = (self.workspace, *(p.resolve() for p in additional_directories))
        self._env = env
        self.locks = FileLocks()
        self.capacity = Capacity(settings.max_concurrency, settings.kind_limits)
        self.interrupted = False
        self._active: set[anyio.CancelScope] = set()
        self._always: set[str] = set()
        self._ask_lock = anyio.Lock()

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
                out=_Ordered(lambda r, acc=results: self._deliver(r, acc)),
                cwd=self.workspace,
                limiter=self.capacity.plan_limiter(jobs),
            )
            state.results = results
            states.append(state)
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
        return [s.results for s in states]

    # -- per plan ---------------------------------------------------------------------------

    def _deliver(self, result: Result, acc: list[Result]) -> None:
        acc.append(result)
        if self._journal is not None:
            self._journal.write({"event": "result", **result.as_json()})
        if self._on_result is not None:
            self._on_result(result)

    async def _run_plan(self, state: _PlanState) -> None:
        limit = self.settings.max_calls_per_turn
        for turn in state.plan.turns:
            admitted, excess = turn.calls[:limit], turn.calls[limit:]
            runs = partition(admitted, self._is_safe)
            for run in runs:
                if self.interrupted:
                    for call in run.calls:
                        state.out.put(self._interrupted_before(state, call))
                    continue
                await self._run_one_run(state, run.kind, run.calls)
            for call in excess:
                state.out.put(
                    self._result(
                        state,
                        call,
                        CallDecision("deny", "turn limit", DecidedBy("admission")),
                        Status.ERROR,
                        error=(
                            f"turn_limit: a turn admits at most {limit} calls; "
                            "this call did not run (retry it in a later turn)"
                        ),
                        aborted_before_launch=True,
                    )
                )

    def _is_safe(self, call: Call) -> bool:
        tool = self.registry.get(call.tool)
        return tool is not None and bool(tool.is_concurrency_safe(call.params))

    async def _run_one_run(
        self, state: _PlanState, kind: Literal["concurrent", "exclusive"], calls: Sequence[Call]
    ) -> None:
        # Decide every call of the run before any of it starts.
        allowed: list[tuple[Call, CallDecision]] = []
        for call in calls:
            decision = self._decide(call, state.cwd)
            if decision.decision == "allow":
                allowed.append((call, decision))
                continue
            if decision.decision == "deny" or self.settings.dry_run:
                status = Status.DENIED if decision.decision == "deny" else Status.SKIPPED
                error = _denial_text(call, decision) if status is Status.DENIED else None
                state.out.put(self._result(state, call, decision, status, error=error))
                continue
            approved = await self._resolve_ask(state, call, decision)
            if approved is None:  # interrupted while asking
                state.out.put(self._interrupted_before(state, call, decision))
            elif approved.decision == "allow":
                allowed.append((call, approved))
            else:
                state.out.put(
                    self._result(state, call, approved, Status.DENIED, error=approved.reason)
                )
        if self.settings.dry_run:
            for call, decision in allowed:
                state.out.put(self._result(state, call, decision, Status.SKIPPED))
            return
        if not allowed:
            return
        if kind == "exclusive" or len(allowed) == 1:
            for call, decision in allowed:
                result = await self._execute(state, call, decision)
                self._carry_cwd(state, result)
                state.out.put(result)
            return
        await self._run_concurrent(state, allowed)

    async def _run_concurrent(
        self, state: _PlanState, allowed: list[tuple[Call, CallDecision]]
    ) -> None:
        scopes = {call.index: anyio.CancelScope() for call, _ in allowed}
        reasons: dict[int, str] = {}
        finished: dict[int, Result] = {}

        async def one(call: Call, decision: CallDecision) -> None:
            result = await self._execute(
                state, call, decision, scope=scopes[call.index], reasons=reasons
            )
            finished[call.index] = result
            if (
                self.settings.sibling_abort_on_bash_error
                and call.tool == "Bash"
                and result.status in (Status.ERROR, Status.TIMEOUT)
            ):
                why = f"Cancelled: parallel tool call Bash({_short(call)}) errored"
                for index, scope in scopes.items():
                    if index != call.index and index not in finished:
                        reasons.setdefault(index, why)
                        scope.cancel()
            state.out.put(result)

        async with anyio.create_task_group() as tg:
            for call, decision in allowed:
                tg.start_soon(one, call, decision)
        # Working-directory changes of a concurrent run apply after it, in plan order.
        for call, _ in allowed:
            self._carry_cwd(state, finished[call.index])

    # -- one call ---------------------------------------------------------------------------

    def _decide(self, call: Call, cwd: Path) -> CallDecision:
        try:
            return self.decider.decide(call, cwd)
        except Exception as exc:  # fail closed: what cannot be decided never runs
            return CallDecision(
                "deny",
                f"the permission check failed: {type(exc).__name__}: {exc}",
                DecidedBy("error"),
            )

    async def _resolve_ask(
        self, state: _PlanState, call: Call, decision: CallDecision
    ) -> CallDecision | None:
        if call.tool in self._always:
            return CallDecision("allow", "approved for this run", DecidedBy("user", "always"))
        if self._ask is None:
            if self.settings.ask_default == "allow":
                return CallDecision(
                    "allow", f"approved by --ask allow ({decision.reason})", DecidedBy("flag")
                )
            return CallDecision(
                "ask",
                f"approval needed: {decision.reason}; no terminal to ask "
                "(use --ask allow to approve)",
                decision.decided_by,
            )
        scope = anyio.CancelScope()
        self._active.add(scope)
        answer: AskAnswer | None = None
        try:
            with scope:
                async with self._ask_lock:
                    answer = await self._ask(call, decision)
        finally:
            self._active.discard(scope)
        if answer is None:
            return None
        if answer == "always":
            self._always.add(call.tool)
        if answer in ("yes", "always"):
            return CallDecision("allow", "approved by the user", DecidedBy("user", answer))
        return CallDecision("ask", "denied by the user", DecidedBy("user", "no"))

    def _lock_paths(self, tool: Tool[Any], call: Call, ctx: ToolContext) -> tuple[Path, ...]:
        if tool.kind is not ToolKind.WRITE:
            return ()
        try:
            return tuple(tool.affected_paths(call.params, ctx))
        except Exception:  # e.g. a patch that does not parse: the tool reports it
            return ()

    async def _execute(
        self,
        state: _PlanState,
        call: Call,
        decision: CallDecision,
        *,
        scope: anyio.CancelScope | None = None,
        reasons: Mapping[int, str] | None = None,
    ) -> Result:
        tool = self.registry.get(call.tool)
        assert tool is not None  # the plan was validated against this registry
        scope = scope if scope is not None else anyio.CancelScope()
        ctx = ToolContext(self.workspace, state.cwd, self._env, self.run_id)
        queued = time.time()
        started: float | None = None
        outcome: Outcome | None = None
        self._active.add(scope)
        if self.interrupted:
            scope.cancel()
        try:
            with scope:
                async with self.capacity.slot(str(tool.kind), state.limiter):
                    async with self.locks.hold(self._lock_paths(tool, call, ctx)):
                        started = time.time()
                        outcome = await invoke(tool, call.params, ctx, timeout=call.timeout)
        finally:
            self._active.discard(scope)
        if outcome is None:
            now = time.time()
            status = Status.INTERRUPTED if self.interrupted else Status.CANCELLED
            why = "interrupted" if self.interrupted else (reasons or {}).get(call.index, "cancelled")
            if started is not None:
                why += " after the call started; it may have had side effects"
            else:
                why += " before the call started"
            return self._result(
                state,
                call,
                decision,
                status,
                error=why,
                started_at=started,
                finished_at=now,
                wait_ms=((started or now) - queued) * 1000,
                duration_ms=(now - started) * 1000 if started else 0.0,
                attempts=1 if started else 0,
                aborted_before_launch=started is None,
            )
        return self._result(
            state,
            call,
            decision,
            outcome.status,
            output=outcome.output,
            error=outcome.error,
            started_at=outcome.started_at,
            finished_at=outcome.finished_at,
            wait_ms=(outcome.started_at - queued) * 1000,
            duration_ms=(outcome.finished_at - outcome.started_at) * 1000,
            attempts=outcome.attempts,
            metadata=outcome.metadata,
        )

    def _carry_cwd(self, state: _PlanState, result: Result) -> None:
        raw = result.metadata.get("cwd") if result.tool == "Bash" else None
        if not raw:
            return
        new = Path(os.path.normpath(str(raw)))
        if any(new == root or root in new.parents for root in self._roots):
            state.cwd = new
        else:
            # Like an agent's shell confined to its workspace: the cd does not stick.
            state.cwd = self.workspace

    # -- results ----------------------------------------------------------------------------

    def _interrupted_before(
        self, state: _PlanState, call: Call, decision: CallDecision | None = None
    ) -> Result:
        return self._result(
            state,
            call,
            decision or CallDecision("ask", "not decided", DecidedBy("interrupt")),
            Status.INTERRUPTED,
            error="interrupted before the call started",
            aborted_before_launch=True,
        )

    def _result(
        self,
        state: _PlanState,
        call: Call,
        decision: CallDecision,
        status: Status,
        **fields: Any,
    ) -> Result:
        result = Result(
            index=call.index,
            id=call.id,
            execution_id=f"exec_{uuid.uuid4()}",
            run_id=self.run_id,
            plan=state.plan.file,
            tool=call.tool,
            input=call.input,
            decision=decision.decision,
            decided_by=decision.decided_by,
            status=status,
            location=call.location,
        )
        return replace(result, **fields) if fields else result


def _short(call: Call) -> str:
    command = str(call.input.get("command", ""))
    return command if len(command) <= 40 else command[:40] + "…"


def _denial_text(call: Call, decision: CallDecision) -> str:
    return f"denied: {decision.reason}"
