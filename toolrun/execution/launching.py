"""Launching one call: its capacity slot and its files' locks, the journal's ``started``
record before anything with effects launches, the jail or the sandbox it runs in,
autoVerify, its PostToolUse hooks, and the result of a call cancelled or interrupted on
the way. A read that completes at once goes without a coroutine (``_try_now``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from toolrun.execution.asking import _Asking
from toolrun.execution.bookkeeping import new_execution_id
from toolrun.execution.capacity import Capacity
from toolrun.execution.invocation import Outcome, invoke, invoke_now
from toolrun.execution.locks import FileLocks, LockError
from toolrun.execution.plan_state import _PlanState
from toolrun.execution.results import CallDecision, Result, Status
from toolrun.plan.models import Call
from toolrun.reaper.jail import current as jail_context
from toolrun.stored import OutputStore
from toolrun.tools.base import Tool, ToolContext, ToolKind

if TYPE_CHECKING:
    from toolrun.execution.autoverify import AutoVerify
    from toolrun.hooks import PostToolResult

class _Launching(_Asking):
    """Running one decided call (above the asking)."""

    workspace: Path
    capacity: Capacity
    locks: FileLocks
    verify: AutoVerify | None
    _roots: tuple[Path, ...]
    _env: Mapping[str, str] | None
    _read_veto: Callable[[Path], str | None] | None
    _private_hosts: frozenset[str]

    #: the last context made with no decided paths nor store, for the next one in its cwd
    _plain_context: ToolContext | None = None

    def _context(
        self,
        cwd: Path,
        decided: Sequence[tuple[str, str]] = (),
        store: OutputStore | None = None,
    ) -> ToolContext:
        plain = not decided and store is None
        if plain:  # (most calls without a journal, each Bash call: one context serves them)
            cached = self._plain_context
            if cached is not None and cached.cwd is cwd:
                return cached
        made = ToolContext(
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
        if plain:
            self._plain_context = made
        return made

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
        if self.stops.request is not None:  # a hook stopped the run: nothing more starts
            return self._interrupted_before(state, call)
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
                            # launches: output that failed (`| head`) stops it. (A call
                            # the read-only jail holds has none: it waits for no tick,
                            # and its "started" record no write of its own.)
                            jail_kind = self.jails.kind(call, decision)
                            held = jail_kind == "read-only" and self.jails.unavailable is None
                            show = (
                                bool(self._unshown)
                                and tool.kind is not ToolKind.READ
                                and not held
                            )
                            # A free slot is taken without a checkpoint, so a cancel that
                            # came while the call was queued must be looked for here.
                            if show and scope.cancel_called:
                                self._tick()
                            if not scope.cancel_called:
                                started = time.time()
                                # with results to show first, it goes in the same write;
                                # held in the read-only jail, in the next tick's (asked
                                # for), which comes once this call has launched
                                self._journal_start(
                                    state, call, execution_id, started,
                                    now=not (show or held), soon=held,
                                )
                                if show:  # output that fails here cancels the scope
                                    self._tick()
                            if scope.cancel_called:
                                # journalled as about to start, but it never launched
                                started = None
                            else:
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
                    self.stops.note(post, self.journal)
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
            self._started_on_disk()
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
            self._started_on_disk()
            outcome = await invoke(tool, call.params, ctx, time_limit=call.timeout)
            return self.jails.finish(outcome, None, ctx.cwd, kind)
        return self.jails.finish(outcome, jail, ctx.cwd, kind)

    def _started_on_disk(self) -> None:
        """A call meant for the read-only jail runs outside one after all (none can be
        made): its "started" record, left for the next write, is written before it."""
        if self.journal is not None:
            self.journal.flush()

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
        if self.stops.request is not None:  # _execute gives it the stop's result
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


_NO_LOCKS = contextlib.nullcontext(())
