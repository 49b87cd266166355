"""Scheduling: a plan's turns; each turn's admission (at most ``max_calls_per_turn`` calls)
and its partition into runs; every call of a run decided, in plan order, before any of it
starts; then the run: a concurrent one by a few workers under the capacity limiters, an
exclusive one a call at a time (a write under autoVerify verifying in the background); and
the working directory a run leaves behind.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Literal

import anyio

from toolrun.execution.delivery import _Slices, _Verifying
from toolrun.execution.launching import _Launching
from toolrun.execution.partition import Run, partition
from toolrun.execution.plan_state import _PlanState
from toolrun.execution.results import CallDecision, DecidedBy, Result, Status
from toolrun.plan.models import Call, InvalidInput, Plan, Turn
from toolrun.tools.base import ToolContext

# told of each run (a partition of a turn) just before it is decided and run
RunSink = Callable[[Plan, Run[Call]], None]


class _Scheduling(_Launching):
    """Turns, runs and their calls in order (above the launching of one call)."""

    verify_tools: frozenset[str]
    _on_run: RunSink | None
    _first_decided: bool
    _hooks_decide: bool

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

    def _decide_first(self, state: _PlanState, calls: Sequence[Call]) -> None:
        """The run's first turn that starts with a Bash call: decide that call now (once
        more), so that a jail it is judged into starts while the turn is grouped and
        decided, not after (:meth:`_decide`), with all its side processes when the turn's
        calls may run side by side. Not where hooks may decide it instead."""
        if self._first_decided or not calls or calls[0].tool != "Bash":
            return
        self._first_decided = True
        if not self.settings.dry_run and not self._hooks_decide:
            self.jails.overlap = len(calls) > 1 and self.capacity.global_limit > 1
            self._decide(calls[0], state.cwd)

    async def _run_turn_calls(self, state: _PlanState, turn: Turn) -> None:
        limit = self.settings.max_calls_per_turn
        admitted, excess = turn.calls[:limit], turn.calls[limit:]
        if any(type(c.params) is InvalidInput for c in admitted):
            admitted = self._refused(state, admitted)
        ctx = self._context(state.cwd)
        self._decide_first(state, admitted)
        runs = partition(admitted, partial(self._is_safe, ctx=ctx), self._moves_cwd)
        for run in runs:
            if self.interrupted or self.stops.request is not None:
                for call in run.calls:
                    state.out.put(self._interrupted_before(state, call))
                continue
            if self._on_run is not None:
                self._on_run(state.plan, run)
            state.runs += 1
            if self._places_runs and self.settings.dry_run:  # (only a dry run's results show it)
                state.run_place = {"turn": turn.index + 1, "run": state.runs, "run_kind": run.kind}
            await self._run_one_run(state, run.kind, run.calls)
        for call in excess:
            state.out.put(
                self._result(state, call, TURN_LIMIT, Status.ERROR,
                             error=turn_limit_error(limit), aborted_before_launch=True)
            )  # fmt: skip

    def _refused(self, state: _PlanState, calls: Sequence[Call]) -> tuple[Call, ...]:
        """The calls whose recorded input their tool refused get its error (they never run,
        nor are they decided: fail closed, a deny by the input); the others, to run."""
        kept = []
        for call in calls:
            params = call.params
            if type(params) is not InvalidInput:
                kept.append(call)
                continue
            state.out.put(
                self._result(state, call, refused(params), Status.ERROR, error=params.message,
                             aborted_before_launch=True)
            )  # fmt: skip
        return tuple(kept)

    def _dry_outcome(self, call: Call, decision: CallDecision) -> tuple[Status, str | None]:
        """What a dry run says of a decided call (check's too): denied, skipped, or an
        error where its tool cannot run (its MCP server did not start)."""
        if decision.decision == "deny":
            return Status.DENIED, _denial_text(call, decision)
        if decision.decision == "allow":
            unavailable = getattr(self.registry.get(call.tool), "unavailable", None)
            if isinstance(unavailable, str):
                return Status.ERROR, unavailable
        return Status.SKIPPED, None

    def _moves_cwd(self, call: Call) -> bool:
        """Could the call leave Bash in another directory (cd, pushd, popd, ... anywhere in
        it)? Then it ends its concurrent run: the calls after it must start there. The
        same test decides whether the Bash tool looks for the new directory at all."""
        if call.tool != "Bash":
            return False
        env = self._env if self._env is not None else os.environ
        return _may_change_directory()(str(call.input.get("command", "")), env)

    def _is_safe(self, call: Call, ctx: ToolContext) -> bool:
        tool = self.registry.get(call.tool)
        return tool is not None and bool(tool.is_concurrency_safe(call.params, ctx))

    async def _run_one_run(
        self, state: _PlanState, kind: Literal["concurrent", "exclusive"], calls: Sequence[Call]
    ) -> None:
        # PreToolUse hooks of the run's calls run side by side; then every call is
        # decided, in plan order, before any of the run starts.
        # (without hooks there is nothing to wait for: no coroutine a run, most of a dry
        # run's exclusive runs of one call each)
        pre = await self._pre_tool_use(calls, state.cwd) if self.hooks is not None else {}
        if pre:
            state.pre.update(pre)
        if self.interrupted:
            for call in calls:
                state.out.put(self._interrupted_before(state, call))
            return
        stopper = (
            next((pre[c.index] for c in calls if c.index in pre and pre[c.index].stop), None)
            if pre
            else None
        )
        self.stops.note(stopper, self.journal)
        allowed: list[tuple[Call, CallDecision]] = []
        for original in calls:
            hook_result = pre.get(original.index)
            if self.stops.request is not None and (stopper is None or hook_result is not stopper):
                # a hook stopped the run (another call's, or an earlier event's): no start
                state.out.put(self._interrupted_before(state, original))
                continue
            call, problem = self._rewritten(state, original, hook_result)
            if problem is not None:
                state.out.put(problem)
                continue
            decision = self._decide(call, state.cwd, hook_result)
            if decision.decision == "allow":
                allowed.append((call, decision))
                continue
            if decision.decision == "deny" or self.settings.dry_run:
                status, error = self._dry_outcome(call, decision)  # (an ask: skipped)
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
                status, error = self._dry_outcome(call, decision)
                if error is not None:  # a tool that cannot run would fail: say so
                    state.out.put(self._result(state, call, decision, status, error=error,
                                               aborted_before_launch=True))  # fmt: skip
                else:
                    state.out.put(self._result(state, call, decision, status))
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


@functools.cache
def _may_change_directory() -> Callable[[str, Mapping[str, str]], bool]:
    # imported on first use (a plan without Bash never loads the Bash tool's module)
    from toolrun.tools.builtins.bash import may_change_directory

    return may_change_directory


def _short(call: Call) -> str:
    command = str(call.input.get("command", ""))
    return command if len(command) <= 40 else command[:40] + "…"


def refused(params: InvalidInput) -> CallDecision:
    """The decision of a recorded call whose input its tool refused: never decided, a
    deny by the input (fail closed)."""
    return CallDecision("deny", params.message, DecidedBy("input"))


#: The decision of a call beyond its turn's limit (it is not admitted).
TURN_LIMIT = CallDecision("deny", "turn limit", DecidedBy("admission"))


def turn_limit_error(limit: int) -> str:
    """The error of a call beyond its turn's limit of ``limit`` calls."""
    return (
        f"turn_limit: a turn admits at most {limit} calls; "
        "this call did not run (retry it in a later turn)"
    )


def _denial_text(call: Call, decision: CallDecision) -> str:
    reason = decision.reason
    return reason if reason.startswith("denied") else f"denied: {reason}"
