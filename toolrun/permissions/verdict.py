"""How one subject of a call was decided, and how the verdicts of a call's subjects combine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolrun.dataclass_init import fast_init
from toolrun.permissions.decision import DecidedBy
from toolrun.permissions.modes import Behavior, DecidedKind, Step
from toolrun.permissions.rules import CompiledRule


@fast_init
@dataclass(frozen=True, slots=True)
class Verdict:
    """How one subject was decided."""

    decision: Behavior
    kind: DecidedKind
    step: Step | None
    reason: str
    rule: CompiledRule | None = None


NEUTRAL = Verdict("allow", "default", None, "")


@dataclass(frozen=True, slots=True)
class Unknown:
    """A path input that cannot be known (the patch does not parse, ...), and why."""

    problem: str


#: The DecidedBy of each rule that decided a subject, by the rule's identity (the rule is
#: kept with it, so the id stays its own), and of each other kind: a DecidedBy is frozen,
#: so every target and decision a rule or kind decided can share one.
_BY_RULE: dict[int, tuple[CompiledRule, DecidedBy]] = {}
_BY_KIND: dict[tuple[str, str], DecidedBy] = {}


def decided_by(verdict: Verdict) -> DecidedBy:
    rule = verdict.rule
    if rule is not None and verdict.kind == "rule":
        hit = _BY_RULE.get(id(rule))
        if hit is not None and hit[0] is rule:
            return hit[1]
        by = DecidedBy("rule", rule.text, rule.source)
        if len(_BY_RULE) >= 4096:
            _BY_RULE.clear()
        _BY_RULE[id(rule)] = (rule, by)
        return by
    key = (verdict.kind, verdict.decision)
    found = _BY_KIND.get(key)
    if found is None:
        found = _BY_KIND[key] = _by_kind(verdict)
    return found


def _by_kind(verdict: Verdict) -> DecidedBy:
    if verdict.kind == "sandbox":
        allowed = verdict.decision == "allow"
        key = "autoAllowBashIfSandboxed" if allowed else "allowUnsandboxedCommands"
        return DecidedBy("sandbox", f"sandbox.{key}")
    return DecidedBy(verdict.kind)


def quote(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return f"`{text if len(text) <= limit else text[: limit - 1] + '…'}`"


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """Deny if any part is denied, allow only if every part is allowed, else ask.

    For an allow, the part named is the one with the widest reason: a mode that let a
    part through, else a rule, else the first part (read-only, inside the workspace).
    """
    active = [v for v in verdicts if v.step is not None]
    for wanted in ("deny", "ask"):
        for verdict in active:
            if verdict.decision == wanted:
                return verdict
    for kind in ("mode", "rule"):
        for verdict in active:
            if verdict.kind == kind:
                return verdict
    return active[0] if active else NEUTRAL
