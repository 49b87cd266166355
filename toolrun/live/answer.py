"""What toolrun tells the agent about a decision, in the agent's own JSON.

Which decisions are answered (the design, and why):

- **deny** is always answered (Claude Code: ``permissionDecision: deny``; PermissionRequest:
  ``behavior: deny``; Gemini: ``decision: deny``). A hook's deny blocks the call even
  where an allow rule of the agent matches, so toolrun's deny rules, protected paths and
  stricter parse stand whatever the agent's own rules say.
- **ask** is always answered (``permissionDecision: ask``; Gemini ``decision: ask``): a
  prompt is never worse than a silent allow. It may prompt where the agent alone would
  not: an approval the user gave for the session only ("yes, don't ask again" is saved to
  ``.claude/settings.local.json``, which toolrun reads, and then toolrun allows too). In a
  PermissionRequest (the agent is about to prompt anyway) an ask is left silent. In
  Claude Code's ``auto`` mode an ask no rule and no protected path made (toolrun found
  nothing that allows the call) is left silent too: there the agent's classifier decides
  what no rule decides, and a hook's ask would force a prompt over it. A tool that is a
  question to the user (AskUserQuestion) is not asked about either, unless a rule asks.
- **allow** is answered only when a toolrun *rule* allowed the call. An allow of
  toolrun's own judgement (the read-only set, the mode) is left silent, so the agent
  decides with its own rules and modes: when toolrun runs such a call itself (``exec``)
  its judgement is made true by a read-only jail (#25), which the agent's execution
  does not have. ``--allow-read-only`` answers allow for the read-only set (read-only
  Bash, reads inside the workspace) too: for a user who trusts toolrun's analysis more
  than the agent's (it is stricter: :mod:`toolrun.permissions.readonly`). It is a flag
  of the hook's command line, not a key of the project's config: only allows are at
  stake, and the command line is the user's hook entry, where a project's files cannot
  widen what the hook approves.

An answered allow never opens what the agent's own rules deny: Claude Code checks its
deny and ask rules after a hook's allow (from v2.1.77 for deny, about v2.1.220 for ask;
docs/permissions "Extend permissions with hooks"), and toolrun reads the project's
``.claude/settings*.json`` rules itself, so their denies are toolrun's denies.

Silence is exit 0 with nothing on stdout for Claude Code (no decision: the agent decides)
and ``{}`` for Gemini CLI (which parses stdout as JSON on exit 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from toolrun.permissions.decision import Decision

Answer = Literal["allow", "deny", "ask", "none"]
#: tools whose allow by the mode is a read inside the workspace (the read-only set)
READ_TOOLS: Final = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
_RANK: Final = {"deny": 0, "ask": 1, "allow": 2}


@dataclass(frozen=True, slots=True)
class Verdict:
    """The engine's decision for a hook call and what the agent is told."""

    decision: Decision  # the deciding one (the strictest of the calls decided)
    answer: Answer
    reason: str  # for the agent: names the rule and its file:line when one decided
    #: why an allow was left to the agent (None: answered)
    silent_because: str | None = None


def strictest(decisions: Sequence[Decision]) -> Decision:
    """The first of the strictest decisions (deny, then ask, then allow)."""
    return min(decisions, key=lambda d: _RANK[d.decision])


def read_only(decision: Decision) -> bool:
    """An allow of the read-only set: read-only Bash, or a read inside the workspace."""
    kind = decision.decided_by.kind
    return kind == "readonly" or (kind == "mode" and decision.tool in READ_TOOLS)


def _asked_on_purpose(decision: Decision) -> bool:
    """An ask an ask rule or a protected (or critical) path made."""
    return decision.decided_by.kind in ("rule", "protected") or bool(decision.protected)


def _asks_the_user_itself(tool: str) -> bool:
    """Claude Code's tools that wait for the user by themselves (AskUserQuestion)."""
    from toolrun.permissions.claude_tools import claude_tool

    known = claude_tool(tool)
    return known is not None and known.need == "user"


def verdict(
    decision: Decision, *, allow_read_only: bool = False, classifier: bool = False
) -> Verdict:
    """What toolrun answers for ``decision`` (see the module's docstring); ``classifier``:
    the agent runs in its auto mode."""
    reason = f"toolrun: {decision.reason}"
    if decision.decision == "ask" and not _asked_on_purpose(decision):
        if classifier:
            why = "auto mode: no rule or protected path asks, the agent's classifier decides"
            return Verdict(decision, "none", reason, silent_because=why)
        if _asks_the_user_itself(decision.tool):
            why = f"{decision.tool} is a question to the user: a permission prompt would ask twice"
            return Verdict(decision, "none", reason, silent_because=why)
    if decision.decision != "allow":
        return Verdict(decision, decision.decision, reason)
    if decision.decided_by.kind == "rule":
        return Verdict(decision, "allow", reason)
    if allow_read_only and read_only(decision):
        return Verdict(decision, "allow", reason)
    why = (
        "allowed by toolrun's read-only set, which is answered only with --allow-read-only"
        if read_only(decision)
        else f"allowed by toolrun's {decision.decided_by.kind}, not by a rule: "
        "the agent decides"
    )
    return Verdict(decision, "none", reason, silent_because=why)


def claude_output(event: str, answer: Answer, reason: str) -> dict[str, Any] | None:
    """Claude Code's hook JSON for ``answer`` (None: print nothing)."""
    if event == "PermissionRequest":
        if answer == "deny":
            decision = {"behavior": "deny", "message": reason}
        elif answer == "allow":
            decision = {"behavior": "allow"}
        else:  # ask: the permission dialog Claude Code is about to show is the ask
            return None
        return {"hookSpecificOutput": {"hookEventName": event, "decision": decision}}
    if answer == "none":
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": event,
            "permissionDecision": answer,
            "permissionDecisionReason": reason,
        }
    }


def gemini_output(answer: Answer, reason: str) -> dict[str, Any]:
    """Gemini CLI's BeforeTool JSON for ``answer`` (``{}``: no decision)."""
    if answer == "none":
        return {}
    return {"decision": answer, "reason": reason}


def error_output(protocol: str, event: str, message: str) -> dict[str, Any]:
    """The deny ``--fail closed`` answers when toolrun itself failed."""
    reason = f"toolrun could not decide this call (--fail closed): {message}"
    if protocol == "gemini":
        return gemini_output("deny", reason)
    out = claude_output(event, "deny", reason)
    assert out is not None
    return out
