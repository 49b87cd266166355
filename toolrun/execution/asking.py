"""Asking: the hooks around a call (PreToolUse side by side for a run, PermissionRequest,
PostToolUse and PostToolUseFailure, PostToolBatch), the permission decision of each call
(which fails closed), a hook's rewritten input re-validated, and the question to a person
at the terminal or the answer of --ask; "always" adds the suggested rules for the run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio

from toolrun.execution.bookkeeping import _Bookkeeping
from toolrun.execution.invocation import Outcome
from toolrun.execution.plan_state import _PlanState
from toolrun.execution.results import CallDecision, DecidedBy, Result, Status
from toolrun.plan.models import Call
from toolrun.tools.inputs import validate_input
from toolrun.tools.registry import ToolRegistry
from toolrun.validation import Invalid

if TYPE_CHECKING:
    from toolrun.hooks import HookRunner, PostToolResult, PreToolUseResult

AskAnswer = Literal["yes", "no", "always"]
AskHandler = Callable[[Call, CallDecision], Awaitable[AskAnswer]]


class Decider(Protocol):
    """The permission decision for one call (the one decision path exec and check share),
    given what its PreToolUse hooks said."""

    def decide(
        self, call: Call, cwd: Path, hooks: PreToolUseResult | None = None
    ) -> CallDecision: ...


class _Asking(_Bookkeeping):
    """Deciding and asking for each call, and the hooks around it (above the bookkeeping)."""

    registry: ToolRegistry
    decider: Decider
    hooks: HookRunner | None
    interrupted: bool
    _ask: AskHandler | None
    _ask_lock: anyio.Lock
    _active: set[anyio.CancelScope]  # what Ctrl-C cancels

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
        suggestions = self._permission_updates(call, state)
        answer = await hooks.permission_request(
            call.tool, call.input, cwd=state.cwd, suggestions=suggestions
        )
        self.stops.note(answer, self.journal)  # a deny with ``interrupt: true`` stops too
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
        if answer.updated_permissions:
            from toolrun.execution.hook_events import apply_permission_updates, suggested_rules

            notes = apply_permission_updates(
                self.decider, answer.updated_permissions, suggested_rules(suggestions)
            )
            added = [rule for note in notes for rule in note.get("applied", ())]
            if added:
                why += f"; {', '.join(added)} added for the rest of this run"
            if self.journal is not None:
                self.journal.write({"event": "permission_updates", "run_id": self.run_id,
                                    "id": call.id, "updates": list(notes)})  # fmt: skip
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
        if self._ask is None:
            return self._unprompted(decision)
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

    def _unprompted(self, decision: CallDecision) -> CallDecision:
        """The answer to an ask where nobody is asked (no terminal): --ask allow approves
        it, unless it is a protected or critical path; otherwise it stays an ask."""
        why = ask_reason(decision.reason)
        if decision.protected is not None:
            return replace(
                decision,
                reason=f"{why}; only a person at a terminal may approve it "
                "(--ask allow never approves a protected or critical path)",
            )
        if self.settings.ask_default == "allow":
            return CallDecision("allow", f"approved by --ask allow ({why})", DecidedBy("flag"))
        return replace(decision, reason=f"{why}; no terminal to ask (use --ask allow to approve)")

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
        from toolrun.execution.hook_events import failure_error

        error = failure_error(call.tool, outcome.error, outcome.output, outcome.metadata)
        return await hooks.post_tool_use_failure(
            call.tool, call.input, error, call_id=call.id, cwd=cwd, duration_ms=took
        )

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
        self.stops.note(outcome, self.journal)  # a block stops before the next batch or turn
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

    def _has_post_hooks(self) -> bool:
        hooks = self.hooks
        return hooks is not None and (
            hooks.has_hooks("PostToolUse") or hooks.has_hooks("PostToolUseFailure")
        )


def ask_reason(reason: str) -> str:
    """The reason of an ask without the engine's leading "needs approval: " (the status,
    the prompt and the result already say so)."""
    return reason.removeprefix("needs approval: ")
