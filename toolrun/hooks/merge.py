"""Merging hook runs, and merging the hooks' verdict with the permission rules (pure).

PreToolUse: decisions merge deny > defer > ask > allow; the reason and
``decided_by`` come from the first hook (config order) with the winning
decision; ``updatedInput`` replaces the whole input and rewrites apply in
config order (so the last rewrite in config order wins; a ``sequential``
group already chained its own).

With the rules (:func:`merge_decision`), a hook can only tighten:

* a hook deny (or exit 2, or a fail-closed failure) always denies;
* a hook ask turns allow into ask (a deny stays deny; ``dontAsk`` turns it
  into deny);
* a hook allow skips a prompt: it turns an ask into allow only when no part
  of that ask came from an explicit ask rule or a protected or critical path;
  in ``dontAsk`` mode it likewise turns a deny that was only an ask turned
  into deny by the mode. It never overrides a deny or an ask rule;
* defer is no opinion.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from toolrun.hooks.models import (
    FinalDecidedBy,
    FinalDecision,
    HookEvent,
    HookRef,
    HookRun,
    PostToolResult,
    PreDecision,
    PreToolUseResult,
    SkippedHook,
    StopRequest,
)
from toolrun.permissions.decision import Decision

_PRIORITY: dict[str, int] = {"deny": 3, "defer": 2, "ask": 1, "allow": 0}
#: Kinds of an ask (or, in dontAsk, a deny) that a hook allow may not override.
# The workspace boundary is firm too: a hook may not approve a path outside it.
_FIRM = frozenset({"rule", "protected", "boundary"})
#: Kinds of a dontAsk deny that were only an "ask" before the mode turned it.
_SOFT_DENY = frozenset({"mode", "boundary", "default"})


def merge_pre_tool_use(
    runs: Sequence[HookRun],
    *,
    skipped: Sequence[SkippedHook] = (),
    problems: Sequence[str] = (),
    event: HookEvent = "PreToolUse",
) -> PreToolUseResult:
    """Combine PreToolUse (or PermissionRequest: allow / deny) runs, given in config order,
    into one result."""
    decision: PreDecision | None = None
    winner: HookRun | None = None
    updated: Mapping[str, Any] | None = None
    for run in runs:
        if run.updated_input is not None:
            updated = run.updated_input
        d = run.decision
        if d is None or d == "block":
            continue
        if decision is None or _PRIORITY[d] > _PRIORITY[decision]:
            decision, winner = d, run
    stopper = next((r for r in runs if r.stop), None)
    return PreToolUseResult(
        decision=decision,
        reason=winner.reason if winner is not None else None,
        decided_by=winner.ref if winner is not None else None,
        updated_input=updated,
        additional_context=tuple(r.additional_context for r in runs if r.additional_context),
        system_messages=tuple(r.system_message for r in runs if r.system_message),
        stop=stopper is not None,
        runs=tuple(runs),
        skipped=tuple(skipped),
        problems=tuple(problems),
        event=event,
        stopped_by=stopper.ref if stopper is not None else None,
        stop_reason=_stop_reason(stopper),
        # rules come with an allow only; a deny of another hook wins over them
        updated_permissions=tuple(
            e for r in runs if r.decision == "allow" for e in r.updated_permissions
        ) if decision == "allow" else (),
    )


def _stop_reason(run: HookRun | None) -> str | None:
    if run is None:
        return None
    return run.stop_reason or "the hook said continue: false"


def merge_post(
    event: HookEvent,
    runs: Sequence[HookRun],
    *,
    skipped: Sequence[SkippedHook] = (),
    problems: Sequence[str] = (),
) -> PostToolResult:
    """Combine PostToolUse / PostToolUseFailure / PostToolBatch runs (config order)."""
    blocker = next((r for r in runs if r.decision in ("block", "deny")), None)
    stopper = next((r for r in runs if r.stop), None)
    output: Any = None
    for run in runs:
        if run.updated_tool_output is not None:
            output = run.updated_tool_output
    return PostToolResult(
        event=event,
        blocked=blocker is not None,
        reason=blocker.reason if blocker is not None else None,
        decided_by=blocker.ref if blocker is not None else None,
        additional_context=tuple(r.additional_context for r in runs if r.additional_context),
        updated_tool_output=output,
        system_messages=tuple(r.system_message for r in runs if r.system_message),
        stop=stopper is not None,
        runs=tuple(runs),
        skipped=tuple(skipped),
        problems=tuple(problems),
        stopped_by=stopper.ref if stopper is not None else None,
        stop_reason=_stop_reason(stopper),
    )


# ---------------------------------------------------------------------- with the rules


def _engine_by(decision: Decision) -> FinalDecidedBy:
    by = decision.decided_by
    return FinalDecidedBy(by.kind, by.rule, by.source)


def _parts(decision: Decision) -> Iterator[tuple[str, str]]:
    """(decision, kind) of the call and of every sub-command and target that is not allow."""
    if decision.decision != "allow":
        yield decision.decision, decision.decided_by.kind
    targets = list(decision.targets)
    for sub in decision.subcommands:
        if sub.decision != "allow":
            yield sub.decision, sub.decided_by.kind
        targets.extend(sub.targets)
    for target in targets:
        if target.decision not in (None, "allow") and target.decided_by is not None:
            yield target.decision, target.decided_by.kind


def hook_allow_applies(decision: Decision) -> bool:
    """May a hook's allow turn this engine decision into allow?

    Yes for an ask none of whose parts comes from an ask rule or a protected or
    critical path; in ``dontAsk`` mode also for a deny that is only such an ask
    turned into deny by the mode. Never for an explicit deny.
    """
    if decision.decision == "allow":
        return True
    if decision.protected:  # a protected or critical path, or a disguised denied command
        return False
    parts = list(_parts(decision))
    if decision.decision == "ask":
        return all(verdict == "ask" and kind not in _FIRM for verdict, kind in parts)
    if decision.mode == "dontAsk":
        return all(kind in _SOFT_DENY for _verdict, kind in parts)
    return False


def merge_decision(engine: Decision, hooks: PreToolUseResult | None) -> FinalDecision:
    """The final allow/ask/deny for a call, from the rules' decision on the (possibly
    rewritten) input and the PreToolUse hooks' merged result."""
    base = FinalDecision(engine.decision, engine.reason, _engine_by(engine))
    if hooks is None or hooks.decision is None:
        return base
    ref = hooks.decided_by or HookRef("?", "?")
    said = f"PreToolUse hook {ref}"
    why = f": {hooks.reason}" if hooks.reason else ""
    by_hook = FinalDecidedBy("hook", ref.command, ref.source)
    if hooks.decision == "defer":
        return _note(base, f"{said} deferred (no opinion)")
    if hooks.decision == "deny":
        return FinalDecision("deny", f"denied by {said}{why}", by_hook)
    if hooks.decision == "ask":
        if engine.decision == "deny":
            return _note(base, f"{said} asked; the rules' deny stands")
        if engine.mode == "dontAsk":
            reason = f"{said} asks{why}; dontAsk mode turns every ask into deny"
            return FinalDecision("deny", reason, by_hook)
        if engine.decision == "allow":
            return FinalDecision("ask", f"{said} asks{why}", by_hook)
        return _note(base, f"{said} asked too{why}")
    # allow
    if engine.decision == "allow":
        return _note(base, f"{said} allowed too{why}")
    if hook_allow_applies(engine):
        return FinalDecision(
            "allow",
            f"allowed by {said}{why}",
            by_hook,
            notes=(f"without the hook: {engine.decision} ({engine.reason})",),
        )
    return _note(
        base, f"{said} allowed, but a hook's allow never overrides a deny, an ask rule "
              "or a protected path"
    )


def _note(decision: FinalDecision, note: str) -> FinalDecision:
    return FinalDecision(
        decision.decision, decision.reason, decision.decided_by, (*decision.notes, note)
    )


def stop_request(result: PreToolUseResult | PostToolResult) -> StopRequest | None:
    """Does ``result`` stop the run? ``continue: false`` from any hook of any event, and a
    PostToolBatch block (exit 2 or ``decision: block``: "stops before the next model call")."""
    if result.stopped_by is not None:
        return StopRequest(result.event, result.stopped_by, result.stop_reason or "")
    if isinstance(result, PostToolResult) and result.event == "PostToolBatch" and result.blocked:
        return StopRequest(
            "PostToolBatch",
            result.decided_by or HookRef("?", "?"),
            result.reason or "the hook blocked the batch",
        )
    return None
