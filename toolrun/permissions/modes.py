"""Permission modes: what each mode does with the outcome of the rule steps (design §4).

The resolver finds, for one subject, the first step that has something to say
(a deny rule, an ask rule, a protected path, ...); :func:`apply_mode` turns that
step into allow/ask/deny under a mode. ``dontAsk`` turns every ask into deny;
``bypassPermissions`` allows the rest but never overrides a deny rule, an ask
rule, a protected path or a critical-path ``rm``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from toolrun.dataclass_init import fast_init

Behavior = Literal["allow", "ask", "deny"]
DecidedKind = Literal[
    "rule", "mode", "readonly", "boundary", "protected", "default", "sandbox"
]
Effect = Literal["read", "write", "execute", "network"]
Step = Literal[
    "deny_rule",
    "ask_rule",
    "protected",
    "unanalysable",
    "allow_rule",
    "readonly",
    "outside",
    "workspace_read",
    "workspace_write",
    "undecided",
]

MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")


@fast_init
@dataclass(frozen=True, slots=True)
class Outcome:
    """What the permission mode makes of a decision the rules left open."""

    decision: Behavior
    kind: DecidedKind
    note: str = ""  # what the mode changed, for the explanation


def _plan_blocks(effect: Effect) -> bool:
    return effect in ("write", "execute")


_PLAN = "plan mode: nothing that writes or runs non-read-only commands may run"
_DONT_ASK = "dontAsk mode turns every ask into deny"
_BYPASS = "bypassPermissions mode allows what no rule denies or asks"


_GUARDED = (
    "it cannot be analysed, so the Bash deny and ask rules cannot be checked: "
    "bypassPermissions does not allow it"
)


@functools.cache  # (a pure function of a few hundred possible arguments, run per subject)
def apply_mode(step: Step, effect: Effect, mode: str, *, guarded: bool = False) -> Outcome:
    """Allow, ask or deny for the first step that decided a subject, under ``mode``.

    ``guarded``: deny or ask rules exist that a Bash command could meet. A command that cannot be analysed could
    be one of theirs in disguise (``r${E}m x``), so bypassPermissions asks for it: "a deny
    anywhere wins" holds in every mode.
    """
    if step == "deny_rule":
        return Outcome("deny", "rule")
    if step == "readonly":
        return Outcome("allow", "readonly")
    if step == "workspace_read":
        return Outcome("allow", "mode", "reads inside the workspace are allowed")
    if mode == "plan" and _plan_blocks(effect):
        return Outcome("deny", "mode", _PLAN)
    if step == "ask_rule":
        return Outcome("deny", "rule", _DONT_ASK) if mode == "dontAsk" else Outcome("ask", "rule")
    if step == "protected":
        if mode == "dontAsk":
            return Outcome("deny", "protected", _DONT_ASK)
        return Outcome("ask", "protected", "no mode and no allow rule approves this")
    if step == "allow_rule":
        return Outcome("allow", "rule")
    if step == "unanalysable" and guarded and mode == "bypassPermissions":
        return Outcome("ask", "default", _GUARDED)
    if mode == "bypassPermissions":
        return Outcome("allow", "mode", _BYPASS)
    if step == "outside":
        if mode == "dontAsk":
            return Outcome("deny", "boundary", _DONT_ASK)
        return Outcome("ask", "boundary")
    if step == "workspace_write" and mode == "acceptEdits":
        return Outcome("allow", "mode", "acceptEdits mode allows file edits inside the workspace")
    if mode == "dontAsk":
        return Outcome("deny", "mode", _DONT_ASK)
    return Outcome("ask", "default")
