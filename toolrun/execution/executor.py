"""The executor: plans in, exactly one result per call out, in plan order, as soon as possible.

For each turn: admit at most ``max_calls_per_turn`` calls, partition the rest
into runs, decide every call of a run before it starts (asks one at a time, in
plan order), then run it — a concurrent run as a task group under the capacity
limiters, an exclusive run alone. Results go to ``on_result`` in plan order once
every earlier call of the plan has its result, at the next scheduling tick: the
journal takes the tick's records in one write first (so what was shown is in it),
then ``on_result`` gets each result and ``on_flush`` is called once.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio
import anyio.lowlevel

from toolrun.config.models import DEFAULT_MAX_STORED_OUTPUT
from toolrun.execution.capacity import Capacity
from toolrun.execution.invocation import Outcome, invoke, invoke_now
from toolrun.execution.jailing import JailKeeper, edit_denies, literal_denies, read_denied
from toolrun.execution.journal import Journal, stored_outputs_dir
from toolrun.execution.locks import FileLocks, LockError
from toolrun.execution.partition import Run, partition
from toolrun.execution.results import (
    JAIL_PLACES,
    CallDecision,
    DecidedBy,
    Result,
    Status,
    encode_json,
    utc_iso,
    where_it_runs,
)
from toolrun.execution.stored import OutputStore
from toolrun.plan.models import Call, InvalidInput, Plan, Turn
from toolrun.reaper.jail import current as jail_context
from toolrun.tools.base import Tool, ToolContext, ToolKind
from toolrun.tools.inputs import validate_input
from toolrun.tools.registry import ToolRegistry
from toolrun.validation import Invalid
from toolrun.verify.files import WRITE_TOOLS

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from toolrun.hooks import HookRunner, PostToolResult, PreToolUseResult
    from toolrun.sandbox.policy import SandboxPolicy
    from toolrun.verify.runner import AutoVerify

AskAnswer = Literal["yes", "no", "always"]
AskHandler = Callable[[Call, CallDecision], Awaitable[AskAnswer]]
ResultSink = Callable[[Result], None]
# called after each tick's results went to the ResultSink (e.g. to flush stdout once)
FlushSink = Callable[[], None]
# told of each run (a partition of a turn) just before it is decided and run
RunSink = Callable[[Plan, Run[Call]], None]


class Decider(Protocol):
    """The permission decision for one call (the one decision path exec and check share),
    given what its PreToolUse hooks said."""

    def decide(
        self, call: Call, cwd: Path, hooks: PreToolUseResult | None = None
    ) -> CallDecision: ...


@dataclass(frozen=True, slots=True)
class ExecSettings:
    max_concurrency: int = 10
    kind_limits: Mapping[str, int] = field(default_factory=dict)
    max_calls_per_turn: int = 64
    sibling_abort_on_bash_error: bool = False
    dry_run: bool = False
    ask_default: Literal["deny", "allow"] = "deny"
    jobs: int = 1
    #: toolrun.maxStoredOutput: the most of one call's whole output kept beside the journal
    max_stored_output: int = DEFAULT_MAX_STORED_OUTPUT


class _Ordered:
    """Releases results in index order as soon as every earlier one is in."""

    def __init__(self, sink: ResultSink, start: int = 0) -> None:
        self._sink = sink
        self._next = start
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
    # PreToolUse hook results of calls that do not have their result yet
    pre: dict[int, PreToolUseResult] = field(default_factory=dict)
    # the partition so far: runs counted across the plan, the current run's place
    runs: int = 0
    run_place: dict[str, Any] = field(default_factory=dict)
    # inputs as the plan gave them, of calls whose input a hook rewrote
    originals: dict[int, Mapping[str, Any]] = field(default_factory=dict)
    # writes whose autoVerify runs on while later calls go (this turn's)
    verifying: _Verifying | None = None


class _Verifying:
    """The writes of one turn whose verifiers still run. Each keeps its file's lock (and
    its place in the ordered output) until its verifiers end, so later reads and writes
    of other files go on meanwhile; a call that may touch any file waits for all."""

    def __init__(self, tg: TaskGroup) -> None:
        self._tg = tg
        self._pending = 0
        self._idle = anyio.Event()
        self._idle.set()

    async def start(self, execute: Callable[..., Awaitable[Result]], out: _Ordered) -> None:
        """Run the write (``execute(written=event)``) in the background; return once it is
        written (or never will be)."""
        written = anyio.Event()
        self._pending += 1
        if self._idle.is_set():
            self._idle = anyio.Event()

        async def write_then_verify() -> None:
            try:
                out.put(await execute(written=written))
            finally:
                written.set()
                self._pending -= 1
                if not self._pending:
                    self._idle.set()

        self._tg.start_soon(write_then_verify)
        await written.wait()

    async def idle(self) -> None:
        await self._idle.wait()


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
        self._active: set[anyio.CancelScope] = set()
        self._ask_lock = anyio.Lock()
        self._unshown: list[Result] = []  # delivered, for on_result at the next tick
        self._tick_due = False
        self._sink_error: BaseException | None = None
        # the journal whose stored-outputs folder was worked out, and the folder
        self._stored_dir: tuple[Journal | None, Path] = (None, Path())
        self._first_decided = False  # (see _decide_first)
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

    # -- per plan ---------------------------------------------------------------------------

    def _deliver(self, result: Result, acc: list[Result] | None) -> None:
        if acc is not None:
            acc.append(result)
        if self.journal is not None:
            self.journal.add(result.journal_line())
        self._unshown.append(result)
        if self._tick_due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not under asyncio: no tick to wait for
            self._tick()
            return
        self._tick_due = True
        loop.call_soon(self._tick)

    def _tick(self) -> None:
        """Once per scheduling tick (when the event loop next gets control), and at the
        end: the journal's records in one write, then the results to ``on_result``."""
        self._tick_due = False
        if self.journal is not None:
            self.journal.flush()
        shown, self._unshown = self._unshown, []
        if not shown or self.on_result is None:
            return
        try:
            for result in shown:
                self.on_result(result)
            if self.on_flush is not None:
                self.on_flush()
        except BaseException as exc:  # noqa: BLE001 - raised at the end of the run
            # (outside any task, from the event loop's own callback, it would be lost)
            if self._sink_error is None:
                self._sink_error = exc

    def _raise_sink_error(self) -> None:
        error, self._sink_error = self._sink_error, None
        if error is not None:
            raise error

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

    async def _run_plan(self, state: _PlanState) -> None:
        for turn in state.plan.turns:
            await self._run_turn(state, turn)

    async def _run_turn(self, state: _PlanState, turn: Turn) -> None:
        if self.verify is None:
            await self._run_turn_calls(state, turn)
            return
        # A turn's results are what the next turn was planned on: its verifications end
        # with it.
        async with anyio.create_task_group() as tg:
            state.verifying = _Verifying(tg)
            try:
                await self._run_turn_calls(state, turn)
            finally:
                state.verifying = None

    async def _run_turn_calls(self, state: _PlanState, turn: Turn) -> None:
        limit = self.settings.max_calls_per_turn
        admitted, excess = turn.calls[:limit], turn.calls[limit:]
        if any(type(c.params) is InvalidInput for c in admitted):
            admitted = self._refused(state, admitted)
        ctx = self._context(state.cwd)
        self._decide_first(state, admitted)
        runs = partition(admitted, partial(self._is_safe, ctx=ctx), self._moves_cwd)
        for run in runs:
            if self.interrupted:
                for call in run.calls:
                    state.out.put(self._interrupted_before(state, call))
                continue
            if self._on_run is not None:
                self._on_run(state.plan, run)
            state.runs += 1
            state.run_place = {"turn": turn.index + 1, "run": state.runs, "run_kind": run.kind}
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

    def _decide_first(self, state: _PlanState, calls: Sequence[Call]) -> None:
        """The run's first turn that starts with a Bash call: decide that call now (once
        more), so that a jail it is judged into starts while the turn is grouped and
        decided, not after (:meth:`_decide`). Not where hooks may decide it instead."""
        if self._first_decided or not calls or calls[0].tool != "Bash":
            return
        self._first_decided = True
        if not self.settings.dry_run and not self._hooks_decide:
            self._decide(calls[0], state.cwd)

    def _refused(self, state: _PlanState, calls: Sequence[Call]) -> tuple[Call, ...]:
        """The calls whose recorded input their tool refused get its error (they never run,
        nor are they decided: fail closed, a deny by the input); the others, to run."""
        kept = []
        for call in calls:
            params = call.params
            if type(params) is not InvalidInput:
                kept.append(call)
                continue
            message = params.message
            decision = CallDecision("deny", message, DecidedBy("input"))
            state.out.put(
                self._result(
                    state, call, decision, Status.ERROR, error=message, aborted_before_launch=True
                )
            )
        return tuple(kept)

    def _moves_cwd(self, call: Call) -> bool:
        """Could the call leave Bash in another directory (cd, pushd, popd, ... anywhere in
        it)? Then it ends its concurrent run: the calls after it must start there. The
        same test decides whether the Bash tool looks for the new directory at all."""
        if call.tool != "Bash":
            return False
        env = self._env if self._env is not None else os.environ
        return _may_change_directory()(str(call.input.get("command", "")), env)

    def _context(
        self,
        cwd: Path,
        decided: Sequence[tuple[str, str]] = (),
        store: OutputStore | None = None,
    ) -> ToolContext:
        return ToolContext(
            self.workspace,
            cwd,
            self._env,
            self.run_id,
            read_veto=self._read_veto,
            roots=self._roots,
            decided=dict(decided) if decided else None,
            private_hosts=self._private_hosts,
            sandbox=self._sandbox,
            stored_output=store,
        )

    def _output_store(self, execution_id: str) -> OutputStore | None:
        """Where a call's whole output may go: beside the journal, so none without one."""
        journal = self.journal
        if journal is None:
            return None
        if self._stored_dir[0] is not journal:
            self._stored_dir = (journal, stored_outputs_dir(journal.path))
        return OutputStore(
            self._stored_dir[1], self.run_id, execution_id, self.settings.max_stored_output
        )

    def _is_safe(self, call: Call, ctx: ToolContext) -> bool:
        tool = self.registry.get(call.tool)
        return tool is not None and bool(tool.is_concurrency_safe(call.params, ctx))

    async def _run_one_run(
        self, state: _PlanState, kind: Literal["concurrent", "exclusive"], calls: Sequence[Call]
    ) -> None:
        # PreToolUse hooks of the run's calls run side by side; then every call is
        # decided, in plan order, before any of the run starts.
        pre = await self._pre_tool_use(calls, state.cwd)
        state.pre.update(pre)
        if self.interrupted:
            for call in calls:
                state.out.put(self._interrupted_before(state, call))
            return
        allowed: list[tuple[Call, CallDecision]] = []
        for original in calls:
            hook_result = pre.get(original.index)
            call, problem = self._rewritten(state, original, hook_result)
            if problem is not None:
                state.out.put(problem)
                continue
            decision = self._decide(call, state.cwd, hook_result)
            if decision.decision == "allow":
                allowed.append((call, decision))
                continue
            if decision.decision == "deny" or self.settings.dry_run:
                status = Status.DENIED if decision.decision == "deny" else Status.SKIPPED
                error = _denial_text(call, decision) if status is Status.DENIED else None
                state.out.put(self._result(state, call, decision, status, error=error))
                continue
            answered = await self._permission_request(state, call, decision)
            if isinstance(answered, Result):
                state.out.put(answered)
                continue
            if answered is not None:
                allowed.append(answered)
                continue
            approved = await self._resolve_ask(state, call, decision)
            if approved is None:  # interrupted while asking
                state.out.put(self._interrupted_before(state, call, decision))
            elif approved.decision == "allow":
                allowed.append((call, replace(approved, paths=decision.paths)))
            else:
                # "no" at the prompt is a denial; an ask nobody answered needs approval
                status = Status.DENIED if approved.decision == "deny" else Status.NEEDS_APPROVAL
                state.out.put(self._result(state, call, approved, status, error=approved.reason))
        if self.settings.dry_run:
            for call, decision in allowed:
                # a tool that cannot run (its MCP server did not start) would fail: say so
                unavailable = getattr(self.registry.get(call.tool), "unavailable", None)
                if isinstance(unavailable, str):
                    state.out.put(self._result(state, call, decision, Status.ERROR,
                                               error=unavailable, aborted_before_launch=True))
                else:
                    state.out.put(self._result(state, call, decision, Status.SKIPPED))
            return
        if not allowed:
            return
        if kind == "exclusive" or len(allowed) == 1:
            done: list[Result] = []
            for call, decision in allowed:
                verifying = state.verifying
                if verifying is not None and kind == "exclusive":
                    if call.tool in self.verify_tools:
                        await verifying.start(
                            partial(self._execute, state, call, decision), state.out
                        )
                        continue
                    await verifying.idle()  # it may touch a file being verified
                result = await self._execute(state, call, decision)
                self._carry_cwd(state, result)
                state.out.put(result)
                done.append(result)
        else:
            done = await self._run_concurrent(state, allowed)
        if kind == "concurrent":
            await self._post_tool_batch(state, done)

    async def _post_tool_batch(self, state: _PlanState, done: Sequence[Result]) -> None:
        """PostToolBatch hooks, once after each concurrent run; recorded in the journal."""
        hooks = self.hooks
        if hooks is None or self.interrupted or not hooks.has_hooks("PostToolBatch"):
            return
        from toolrun.hooks import BatchCall

        batch = [BatchCall(r.tool, r.input, r.id, r.output) for r in done]
        scope = anyio.CancelScope()
        self._active.add(scope)
        try:
            with scope:
                outcome = await hooks.post_tool_batch(batch, cwd=state.cwd)
        finally:
            self._active.discard(scope)
        if scope.cancelled_caught:
            return
        if self.journal is not None:
            self.journal.write(
                {
                    "event": "PostToolBatch",
                    "run_id": self.run_id,
                    "plan": state.plan.file,
                    "calls": [r.id for r in done],
                    **outcome.to_json(),
                }
            )

    async def _run_concurrent(
        self, state: _PlanState, allowed: list[tuple[Call, CallDecision]]
    ) -> list[Result]:
        # Each call's own cancel scope, made up front only when a failing sibling may
        # cancel calls that have not started yet (else _execute makes one if it needs it).
        abortable = self.settings.sibling_abort_on_bash_error
        scopes = {call.index: anyio.CancelScope() for call, _ in allowed} if abortable else {}
        reasons: dict[int, str] = {}
        finished: dict[int, Result] = {}
        queued_at = time.time()

        async def one(call: Call, decision: CallDecision) -> None:
            result = self._try_now(state, call, decision, scopes.get(call.index), queued_at)
            if result is None:  # (a read at once needs no coroutine either)
                result = await self._execute(
                    state,
                    call,
                    decision,
                    scope=scopes.get(call.index),
                    reasons=reasons,
                    queued_at=queued_at,
                    try_now=False,
                )
            finished[call.index] = result
            if (
                abortable
                and call.tool == "Bash"
                and result.status in (Status.ERROR, Status.TIMEOUT)
            ):
                why = f"Cancelled: parallel tool call Bash({_short(call)}) errored"
                for index, scope in scopes.items():
                    if index != call.index and index not in finished:
                        reasons.setdefault(index, why)
                        scope.cancel()
            state.out.put(result)

        # A few workers take the run's calls in plan order, rather than one task per
        # call all queueing on the limiter: the same order, a fraction of the overhead.
        pending = iter(allowed)

        slices = _Slices(asyncio.get_running_loop())

        async def worker() -> None:
            for call, decision in pending:
                await one(call, decision)  # (a coroutine that only waits if the call does)
                if slices.over():
                    await slices.hand_over()

        async with anyio.create_task_group() as tg:
            for _ in range(min(len(allowed), self.capacity.global_limit)):
                tg.start_soon(worker)
        # Working-directory changes of a concurrent run apply after it, in plan order.
        for call, _ in allowed:
            self._carry_cwd(state, finished[call.index])
        return [finished[call.index] for call, _ in allowed]

    # -- one call ---------------------------------------------------------------------------

    async def _pre_tool_use(self, calls: Sequence[Call], cwd: Path) -> dict[int, PreToolUseResult]:
        hooks = self.hooks
        results: dict[int, PreToolUseResult] = {}
        if hooks is None or not hooks.has_hooks("PreToolUse"):
            return results

        async def one(call: Call) -> None:
            results[call.index] = await hooks.pre_tool_use(
                call.tool, call.input, call_id=call.id, cwd=cwd
            )

        scope = anyio.CancelScope()
        self._active.add(scope)
        try:
            with scope:
                async with anyio.create_task_group() as tg:
                    for call in calls:
                        tg.start_soon(one, call)
        finally:
            self._active.discard(scope)
        return results

    def _rewritten(
        self, state: _PlanState, call: Call, hooks: PreToolUseResult | None
    ) -> tuple[Call, Result | None]:
        """The call with a hook's ``updatedInput``, re-validated against the tool's schema."""
        if hooks is None or hooks.updated_input is None:
            return call, None
        tool = self.registry.get(call.tool)
        new_input = dict(hooks.updated_input)
        if tool is None:  # a transcript's own tool, only decided (check): nothing to validate
            state.originals[call.index] = call.input
            return replace(call, input=new_input), None
        try:
            params = validate_input(tool, new_input)
        except Invalid as exc:
            where = f" by {hooks.decided_by}" if hooks.decided_by else ""
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}"
                for e in exc.error.errors(include_url=False)
            )
            decision = CallDecision(
                "deny", f"a hook's updatedInput is not valid {call.tool} input", DecidedBy("hook")
            )
            return call, self._result(
                state,
                call,
                decision,
                Status.DENIED,
                error=f"denied: the input rewritten{where} is not valid for {call.tool}: {problems}",
            )
        if new_input != dict(call.input):  # an updatedInput equal to the input changes nothing
            state.originals[call.index] = call.input
        return replace(call, input=new_input, params=params), None

    def _decide(self, call: Call, cwd: Path, hooks: PreToolUseResult | None = None) -> CallDecision:
        try:
            decision = self.decider.decide(call, cwd, hooks)
            if decision.jail is not None and not self.settings.dry_run:
                # the first judged call: make the jail while the rest of the turn is decided
                # (a jail costs 30-50 ms to start: probe, masks, bubblewrap, side process)
                sandbox = self._sandbox
                self.jails.prestart(sandbox.settings.bwrap_path if sandbox else None,
                                    decision.jail)
            return decision
        except Exception as exc:  # noqa: BLE001 - fail closed: what cannot be decided never runs
            return CallDecision(
                "deny",
                f"the permission check failed: {type(exc).__name__}: {exc}",
                DecidedBy("error"),
            )

    async def _permission_request(
        self, state: _PlanState, call: Call, decision: CallDecision
    ) -> tuple[Call, CallDecision] | Result | None:
        """PermissionRequest hooks answer an ask before the prompt or --ask (so CI can
        approve by script): a denial, an approval (of the hook's ``updatedInput``, which is
        validated and decided again: its deny stands), or None to ask as usual. Like --ask
        allow, a hook never approves a protected or critical path: only a person may."""
        hooks = self.hooks
        if hooks is None or not hooks.has_hooks("PermissionRequest"):
            return None
        answer = await hooks.permission_request(
            call.tool, call.input, cwd=state.cwd, suggestions=self._permission_updates(call, state)
        )
        by = answer.decided_by
        who = DecidedBy("hook", by.command, by.source) if by is not None else DecidedBy("hook")
        if answer.decision == "deny":
            why = f"denied by PermissionRequest hook {by}" + (
                f": {answer.reason}" if answer.reason else ""
            )
            return self._result(state, call, CallDecision("deny", why, who), Status.DENIED,
                                error=why)
        if answer.decision != "allow" or decision.protected is not None:
            return None
        paths = decision.paths
        if answer.updated_input is not None:
            call, problem = self._rewritten(state, call, answer)
            if problem is not None:
                return problem
            again = self._decide(call, state.cwd)
            # The hook answered this ask; a rewrite that asks for another reason (outside
            # the workspace, an ask rule) or is denied is not what it answered.
            same_ask = again.decision == "ask" and again.decided_by.kind == decision.decided_by.kind
            if again.decision != "allow" and (not same_ask or again.protected is not None):
                status = Status.DENIED if again.decision == "deny" else Status.NEEDS_APPROVAL
                why = f"the input rewritten by PermissionRequest hook {by}: {again.reason}"
                return self._result(state, call, replace(again, reason=why), status, error=why)
            paths = again.paths
        why = f"approved by PermissionRequest hook {by} ({ask_reason(decision.reason)})"
        return call, CallDecision("allow", why, who, paths=paths)

    def _permission_updates(self, call: Call, state: _PlanState) -> list[dict[str, Any]]:
        """The rule(s) "always" would add, in the shape Claude Code gives hooks."""
        from toolrun.hooks.protocol import permission_updates

        suggest = getattr(self.decider, "suggest", None)
        if suggest is None:
            return []
        try:
            rules, _why = suggest(call, state.cwd)
        except Exception:  # noqa: BLE001 - no suggestion: the hook still gets the ask
            return []
        return permission_updates(rules)

    async def _resolve_ask(
        self, state: _PlanState, call: Call, decision: CallDecision
    ) -> CallDecision | None:
        """Approval for a call that asks: the terminal prompt, else --ask allow/deny.

        "always" adds exactly the suggested rule(s) as allow rules for the rest of the run
        (never the whole tool), so every later call is still decided by the engine: deny
        and ask rules, protected and critical paths and the workspace boundary keep
        applying. A protected or critical path is never approved by --ask allow.
        """
        why = ask_reason(decision.reason)
        if self._ask is None:
            if decision.protected is not None:
                return replace(
                    decision,
                    reason=f"{why}; only a person at a terminal may approve it "
                    "(--ask allow never approves a protected or critical path)",
                )
            if self.settings.ask_default == "allow":
                return CallDecision("allow", f"approved by --ask allow ({why})", DecidedBy("flag"))
            return replace(
                decision, reason=f"{why}; no terminal to ask (use --ask allow to approve)"
            )
        offered = decision
        suggest = getattr(self.decider, "suggest", None)
        if decision.decided_by.kind == "hook":
            offered = replace(decision, suggested_why="a hook asked: it asks again for each call")
        elif suggest is not None:
            try:
                rules, none_why = suggest(call, state.cwd)
            except Exception as exc:  # noqa: BLE001 - no suggestion: "always" is not offered
                rules, none_why = (), f"no rule could be worked out ({type(exc).__name__})"
            offered = replace(decision, suggested=tuple(rules), suggested_why=none_why)
        scope = anyio.CancelScope()
        self._active.add(scope)
        answer: AskAnswer | None = None
        self._tick()  # the results so far are shown before the question
        try:
            with scope:
                async with self._ask_lock:
                    answer = await self._ask(call, offered)
        finally:
            self._active.discard(scope)
        if answer is None:
            return None
        learn = getattr(self.decider, "allow_for_run", None)
        if answer == "always" and offered.suggested and learn is not None:
            learn(offered.suggested)
            added = ", ".join(offered.suggested)
            return CallDecision(
                "allow",
                f"approved by the user; allow {added} added for the rest of this run",
                DecidedBy("user", "always"),
            )
        if answer in ("yes", "always"):
            return CallDecision("allow", "approved by the user", DecidedBy("user", "yes"))
        # The user said no: a denial (exit 4), not a missing approval (exit 5).
        return CallDecision("deny", "denied by the user", DecidedBy("user", "no"))

    def _lock_paths(self, tool: Tool[Any], call: Call, ctx: ToolContext) -> tuple[Path, ...]:
        if tool.kind is not ToolKind.WRITE:
            return ()
        try:
            return tuple(tool.affected_paths(call.params, ctx))
        except Exception:  # noqa: BLE001 - e.g. a patch that does not parse: the tool says so
            return ()

    async def _execute(
        self,
        state: _PlanState,
        call: Call,
        decision: CallDecision,
        *,
        scope: anyio.CancelScope | None = None,
        reasons: Mapping[int, str] | None = None,
        queued_at: float | None = None,
        written: anyio.Event | None = None,
        try_now: bool = True,
    ) -> Result:
        queued = queued_at if queued_at is not None else time.time()
        if try_now and written is None:
            at_once = self._try_now(state, call, decision, scope, queued)
            if at_once is not None:
                return at_once
        tool = self.registry.get(call.tool)
        assert tool is not None  # the plan was validated against this registry
        execution_id = new_execution_id()
        store = self._output_store(execution_id)
        ctx = self._context(state.cwd, decision.paths, store)
        scope = scope if scope is not None else anyio.CancelScope()
        started: float | None = None
        outcome: Outcome | None = None
        post: PostToolResult | None = None
        self._active.add(scope)
        if self.interrupted:
            scope.cancel()
        try:
            with scope:
                async with self.capacity.slot(str(tool.kind), state.limiter):
                    paths = self._lock_paths(tool, call, ctx)
                    try:
                        async with self.locks.hold(paths) if paths else _NO_LOCKS:
                            # Results are shown before a call that may have effects
                            # launches: output that failed (`| head`) stops it.
                            show = bool(self._unshown) and tool.kind is not ToolKind.READ
                            # A free slot is taken without a checkpoint, so a cancel that
                            # came while the call was queued must be looked for here.
                            if show and scope.cancel_called:
                                self._tick()
                            if not scope.cancel_called:
                                started = time.time()
                                # with results to show first, it goes in the same write
                                self._journal_start(
                                    state, call, execution_id, started, now=not show
                                )
                                if show:  # output that fails here cancels the scope
                                    self._tick()
                            if scope.cancel_called:
                                # journalled as about to start, but it never launched
                                started = None
                            else:
                                jail_kind = self.jails.kind(call, decision)
                                if jail_kind is None:
                                    if tool.kind is not ToolKind.READ:
                                        self.jails.ran_outside()
                                    outcome = await invoke(
                                        tool, call.params, ctx, time_limit=call.timeout
                                    )
                                else:
                                    outcome = await self._jailed(tool, call, ctx, jail_kind)
                                if written is not None:  # later calls may go on
                                    written.set()
                                if self.verify is not None:  # toolrun.autoVerify
                                    # under the file's lock: the next write waits for it
                                    outcome = await self.verify.after(call.tool, outcome, ctx)
                    except LockError as exc:  # never run a write without its lock
                        now = time.time()
                        outcome = Outcome(Status.ERROR, "", str(exc), 0, now, now, {})
                if outcome is not None:
                    post = await self._post_tool_use(call, outcome, state.cwd)
        finally:
            self._active.discard(scope)
        if outcome is None:
            now = time.time()
            status = Status.INTERRUPTED if self.interrupted else Status.CANCELLED
            why = (
                "interrupted" if self.interrupted else (reasons or {}).get(call.index, "cancelled")
            )
            if started is not None:
                why += " after the call started; it may have had side effects"
            else:
                why += " before the call started"
            return self._result(
                state,
                call,
                decision,
                status,
                execution_id=execution_id,
                error=why,
                started_at=started,
                finished_at=now,
                wait_ms=((started or now) - queued) * 1000,
                duration_ms=(now - started) * 1000 if started else 0.0,
                attempts=1 if started else 0,
                aborted_before_launch=started is None,
                metadata=store.record() if store is not None else {},
            )
        return self._outcome_result(state, call, decision, execution_id, outcome, queued, store,
                                    post)

    async def _jailed(self, tool: Tool[Any], call: Call, ctx: ToolContext, kind: str) -> Outcome:
        """A call toolrun judged read-only or a workspace file command, or one bypass
        allowed, run in the run's jail of that ``kind`` (#25): the jail replaces the user's
        sandbox for it."""
        sandbox = ctx.sandbox
        bwrap = sandbox.settings.bwrap_path if sandbox is not None else None
        jail = self.jails.jail(bwrap, kind)
        if jail is None:  # none can be made here: as before, and the result says so
            outcome = await invoke(tool, call.params, ctx, time_limit=call.timeout)
            return self.jails.finish(outcome, None, ctx.cwd, kind)
        token = jail_context.set(jail)
        try:
            inside = ctx if ctx.sandbox is None else replace(ctx, sandbox=None)
            outcome = await invoke(tool, call.params, inside, time_limit=call.timeout)
        finally:
            jail_context.reset(token)
        if self.jails.never_started(outcome, jail):
            # the jail died before the command was started (a bubblewrap that cannot mount
            # here): run it as configured, as where no jail can be made, and say so
            outcome = await invoke(tool, call.params, ctx, time_limit=call.timeout)
            return self.jails.finish(outcome, None, ctx.cwd, kind)
        return self.jails.finish(outcome, jail, ctx.cwd, kind)

    def _has_post_hooks(self) -> bool:
        hooks = self.hooks
        return hooks is not None and (
            hooks.has_hooks("PostToolUse") or hooks.has_hooks("PostToolUseFailure")
        )

    def _try_now(
        self,
        state: _PlanState,
        call: Call,
        decision: CallDecision,
        scope: anyio.CancelScope | None,
        queued: float,
    ) -> Result | None:
        """The result of a read that completes at once (see :meth:`_run_now`), or None
        (nothing ran) when the call takes the usual way."""
        tool = self.registry.get(call.tool)
        if tool is None or tool.kind is not ToolKind.READ or self._has_post_hooks():
            return None
        execution_id = new_execution_id()
        store = self._output_store(execution_id)
        ctx = self._context(state.cwd, decision.paths, store)
        done = self._run_now(state, call, tool, ctx, execution_id, scope)
        if done is None:
            return None
        return self._outcome_result(state, call, decision, execution_id, done, queued, store, None)

    def _run_now(
        self,
        state: _PlanState,
        call: Call,
        tool: Tool[Any],
        ctx: ToolContext,
        execution_id: str,
        scope: anyio.CancelScope | None,
    ) -> Outcome | None:
        """A read that completes at once (a small file), run without a coroutine, cancel
        scope or wait: the outcome, or None (nothing ran) when it must take the usual way:
        it was cancelled, waits for a slot, or the tool has to be awaited after all.
        PostToolUse hooks and autoVerify take the usual way (a read has no verifiers)."""
        run_now = getattr(tool, "run_now", None)
        if run_now is None or self.interrupted or (scope is not None and scope.cancel_called):
            return None
        kind = str(tool.kind)
        if not self.capacity.take_now(kind, state.limiter):
            return None
        try:
            outcome = invoke_now(tool, run_now, call.params, ctx)
        finally:
            self.capacity.give_back(kind, state.limiter)
        if outcome is not None:
            # after the read, before its result: a read has no effects to tell apart, and
            # the record is queued for the tick's write either way (_journal_start)
            self._journal_start(state, call, execution_id, outcome.started_at, now=False)
        return outcome

    def _outcome_result(
        self,
        state: _PlanState,
        call: Call,
        decision: CallDecision,
        execution_id: str,
        outcome: Outcome,
        queued: float,
        store: OutputStore | None,
        post: PostToolResult | None,
    ) -> Result:
        metadata = outcome.metadata
        if store is not None:
            # a call that timed out or failed keeps what it printed too
            stored = store.record()
            if stored:  # (most calls store nothing: their metadata as it is)
                metadata = {**metadata, **stored}
        started, finished = outcome.started_at, outcome.finished_at
        where = why = None
        if call.tool == "Bash":  # where it ran: what the jail and the sandbox recorded
            if decision.jail is not None and "jail" not in metadata:
                # meant for a jail of a kind the run made none of: it ran as configured
                unjailed = f"toolrun does not make {decision.jail} jails"
                metadata = {**metadata, "jail": {"kind": decision.jail, "enforced": False,
                                                 "reason": unjailed}}  # fmt: skip
            where, why = where_it_runs(decision, metadata)
        # built directly, in field order (no dict of keyword fields as _result takes): most
        # calls have no hook to add to it (test_journal_records pins it to _result's)
        made = Result(
            call.index, call.id, execution_id, self.run_id, state.plan.file, call.tool,
            call.input, decision.decision, decision.decided_by, outcome.status,
            outcome.output, outcome.error, started, finished,
            (started - queued) * 1000, (finished - started) * 1000, outcome.attempts,
            False, call.location, metadata, runs_in=where, runs_in_why=why,
        )
        return self._completed(state, call, made, post)

    def _no_jail(self, call: Call, decision: CallDecision) -> str | None:
        """A dry run: why no jail can be made here for a call meant for one (None: it can)."""
        if not self.settings.dry_run or decision.runs_in not in JAIL_PLACES:
            return None
        if self.jails.kind(call, decision) is None:  # as exec would run it: as configured
            return f"toolrun does not make {decision.jail} jails"
        sandbox = self._sandbox
        return self.jails.probed(sandbox.settings.bwrap_path if sandbox else None)

    def _journal_start(
        self, state: _PlanState, call: Call, execution_id: str, started: float, *,
        now: bool = True,
    ) -> None:
        """A call is about to launch: after a crash the journal tells it apart from calls
        that never started (those had no effects; this one may have). ``now=False``: with
        the tick's records (the caller ticks before the launch; or the call, a read, has
        run already and its result follows)."""
        if self.journal is None:
            return
        line = started_line(self.run_id, state.plan.file, call, execution_id, started)
        if now:  # the results waiting for this tick go with it, in the one write
            self.journal.write_line(line)
        else:
            self.journal.add(line)

    async def _post_tool_use(
        self, call: Call, outcome: Outcome, cwd: Path
    ) -> PostToolResult | None:
        hooks = self.hooks
        if hooks is None:
            return None
        took = round((outcome.finished_at - outcome.started_at) * 1000)
        if outcome.status is Status.OK:
            if not hooks.has_hooks("PostToolUse"):
                return None
            from toolrun.hooks.responses import tool_response

            response = tool_response(
                call.tool, call.input, outcome.output, outcome.metadata, duration_ms=took
            )
            return await hooks.post_tool_use(
                call.tool, call.input, response, call_id=call.id, cwd=cwd, duration_ms=took
            )
        if not hooks.has_hooks("PostToolUseFailure"):
            return None
        error = outcome.error or "failed"
        return await hooks.post_tool_use_failure(
            call.tool, call.input, error, call_id=call.id, cwd=cwd, duration_ms=took
        )

    def _carry_cwd(self, state: _PlanState, result: Result) -> None:
        raw = result.metadata.get("cwd") if result.tool == "Bash" else None
        if not raw or raw == str(state.cwd):  # (most calls: it stays where it was)
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
        *,
        post: PostToolResult | None = None,
        **fields: Any,
    ) -> Result:
        placed = self.settings.dry_run and bool(state.run_place)
        if placed:  # (made with it: a replace() after was a twentieth of a check)
            fields["metadata"] = {**fields.get("metadata", {}), **state.run_place}
        if call.tool == "Bash":
            no_jail = self._no_jail(call, decision)
            if no_jail is not None:  # as exec's result of it says: it would run unjailed
                jail = {"kind": decision.jail, "enforced": False, "reason": no_jail}
                fields["metadata"] = {**fields.get("metadata", {}), "jail": jail}
            fields["runs_in"], fields["runs_in_why"] = where_it_runs(
                decision, fields.get("metadata")
            )
        made = Result(
            index=call.index,
            id=call.id,
            execution_id=fields.pop("execution_id", None) or new_execution_id(),
            run_id=self.run_id,
            plan=state.plan.file,
            tool=call.tool,
            input=call.input,
            decision=decision.decision,
            decided_by=decision.decided_by,
            status=status,
            location=call.location,
            **fields,
        )
        return self._completed(state, call, made, post, placed=placed)

    def _completed(
        self,
        state: _PlanState,
        call: Call,
        result: Result,
        post: PostToolResult | None,
        *,
        placed: bool = False,
    ) -> Result:
        """``result`` with what a dry run, a PreToolUse rewrite and hooks add to it
        (``placed``: the dry run's place is in it already)."""
        extra: dict[str, Any] = {}
        if self.settings.dry_run and state.run_place and not placed:
            # a dry run shows the partition: which run each call would have been part of
            extra["metadata"] = {**result.metadata, **state.run_place}
        pre = state.pre.pop(call.index, None) if state.pre else None
        asked = state.originals.pop(call.index, None) if state.originals else None
        if asked is not None and pre is not None:
            extra["original_input"] = asked
            extra["rewritten_by"] = _rewriters(asked, pre)
        if pre is not None or post is not None:
            extra.update(_hook_fields(pre, post, result.output))
            if "original_output" in extra:  # a PostToolUse hook replaced the output
                original = extra.pop("original_output")
                metadata = extra.get("metadata", result.metadata)
                extra["metadata"] = {**metadata, "original_output": original}
        return replace(result, **extra) if extra else result


def started_record(
    run_id: str, plan: str, call: Call, execution_id: str, started: float
) -> dict[str, Any]:
    """The journal's ``started`` record of a call about to launch."""
    return {
        "event": "started",
        "run_id": run_id,
        "plan": plan,
        "index": call.index,
        "id": call.id,
        "execution_id": execution_id,
        "tool": call.tool,
        "input": dict(call.input),
        "started_at": utc_iso(started),
    }


def started_line(run_id: str, plan: str, call: Call, execution_id: str, started: float) -> str:
    """:func:`started_record` as a line of JSON, the same text ``encode_json`` gives it,
    put together from its parts (one encoder pass over a dict cost more than the
    rest of journalling a read); anything but the usual types takes the encoder."""
    index, call_id, tool, given = call.index, call.id, call.tool, call.input
    if not (
        type(index) is int
        and type(call_id) is str
        and type(tool) is str
        and type(run_id) is str
        and type(plan) is str
        and type(execution_id) is str
    ):
        return encode_json(started_record(run_id, plan, call, execution_id, started))
    at = utc_iso(started)
    return (
        f'{{"event": "started", "run_id": {_string(run_id)}, "plan": {_string(plan)}, '
        f'"index": {int.__repr__(index)}, "id": {_string(call_id)}, '
        f'"execution_id": {_string(execution_id)}, "tool": {_string(tool)}, '
        f'"input": {encode_json(given if type(given) is dict else dict(given))}, '
        f'"started_at": {"null" if at is None else _string(at)}}}'
    )


#: a string as encode_json writes it (ensure_ascii=False: this is the function it uses)
_string = json.encoder.encode_basestring


class _Flag:
    """Set by an event-loop callback: the loop has had control since it was made."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = False

    def set(self) -> None:
        self.value = True


class _Slices:
    """The time the workers of a concurrent run keep the event loop, shared by them all.

    Calls that never wait (small reads, free slots) would otherwise keep the loop from
    everything else, Ctrl-C handling and the tick that shows results included. Past
    ``YIELD_EVERY_S`` without the loop having had control, each worker hands it over
    before its next call, and none goes on until the loop has run what was waiting
    (not one slice per worker in turn); calls that waited (a command) have let it run
    already, and then nobody needs to.
    """

    __slots__ = ("_loop", "_ran", "_start")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._arm()

    def _arm(self) -> None:
        self._start = time.monotonic()
        self._ran = _Flag()  # set once the event loop has had control since it was armed
        self._loop.call_soon(self._ran.set)

    def over(self) -> bool:
        return time.monotonic() - self._start > YIELD_EVERY_S

    async def hand_over(self) -> None:
        """Once the slice is :meth:`over`: wait until the event loop has had control."""
        ran = self._ran
        while not ran.value:  # (its callback runs before a checkpoint comes back)
            await anyio.lowlevel.checkpoint()
        if self._ran is ran:  # the first worker back starts the next slice
            self._arm()


@functools.cache
def _may_change_directory() -> Callable[[str, Mapping[str, str]], bool]:
    # imported on first use (a plan without Bash never loads the Bash tool's module)
    from toolrun.tools.builtins.bash import may_change_directory

    return may_change_directory


_NO_LOCKS = contextlib.nullcontext(())
YIELD_EVERY_S = 0.005

# uuid4() reads the OS entropy pool on every call (~30 us here); execution ids need
# uniqueness, not secrecy, so a generator seeded once from it does.
_ids = random.Random(uuid.uuid4().int)
# a forked copy (check's part processes) would give the parent's ids again
os.register_at_fork(after_in_child=lambda: _ids.seed(uuid.uuid4().int))


# the bits uuid.UUID(int=..., version=4) sets and clears: version 4, RFC 4122 variant
_UUID4_CLEAR = ~((0xC000 << 48) | (0xF000 << 64)) & ((1 << 128) - 1)
_UUID4_SET = (0x8000 << 48) | (4 << 76)


def new_execution_id() -> str:
    """``exec_`` and a version-4 UUID (as ``str(uuid.UUID(int=bits, version=4))``)."""
    h = f"{_ids.getrandbits(128) & _UUID4_CLEAR | _UUID4_SET:032x}"
    return f"exec_{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _hook_fields(
    pre: PreToolUseResult | None, post: PostToolResult | None, output: str
) -> dict[str, Any]:
    """What PreToolUse and PostToolUse* hooks add to a result."""
    records = [h.to_json() for h in (pre, post) if h is not None]
    context = (*(pre.additional_context if pre else ()), *(post.additional_context if post else ()))
    fields: dict[str, Any] = {"hooks": tuple(records), "additional_context": context}
    if post is not None:
        if post.blocked:
            fields["hook_feedback"] = post.reason or f"blocked by {post.decided_by}"
        if post.updated_tool_output is not None:
            new = post.updated_tool_output
            fields["output"] = new if isinstance(new, str) else json.dumps(new, ensure_ascii=False)
            fields["original_output"] = output
    return fields


def _rewriters(original: Mapping[str, Any], pre: PreToolUseResult) -> tuple[dict[str, str], ...]:
    """The hooks whose updatedInput changed the input, in the order they were applied."""
    current = dict(original)
    changed = []
    for run in pre.runs:
        if run.updated_input is not None and dict(run.updated_input) != current:
            current = dict(run.updated_input)
            changed.append({"command": run.command, "source": run.source})
    return tuple(changed)


def _short(call: Call) -> str:
    command = str(call.input.get("command", ""))
    return command if len(command) <= 40 else command[:40] + "…"


def _denial_text(call: Call, decision: CallDecision) -> str:
    reason = decision.reason
    return reason if reason.startswith("denied") else f"denied: {reason}"


def ask_reason(reason: str) -> str:
    """The reason of an ask without the engine's leading "needs approval: " (the status,
    the prompt and the result already say so)."""
    return reason.removeprefix("needs approval: ")


def _enforcing(engine: object) -> bool:
    """Whether the engine judges calls into jails (``toolrun.enforce`` is not off)."""
    config = getattr(engine, "config", None)
    return getattr(getattr(config, "toolrun", None), "enforce", "auto") != "off"
