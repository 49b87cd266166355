"""Frozen, JSON-able records of hook runs and of their merged results.

Everything here is plain data: :mod:`toolrun.hooks.runner` builds it,
:mod:`toolrun.hooks.merge` combines it, and the executor, the journal and
``explain-permission`` read it through ``to_json()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

#: The hook events toolrun runs: the one list (the config's key checks read it from here).
HookEvent = Literal[
    "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "PostToolBatch",
    "SessionStart", "SessionEnd", "Stop",
]
#: The hook handler types toolrun runs; others (``prompt``, ``agent``, ``mcp_tool``) load
#: with a warning and give no decision (a denial under ``hookFailure: closed``).
RUNNABLE_HOOK_TYPES = frozenset({"command", "http"})
#: What one PreToolUse hook (or all of them, merged) says about the call.
PreDecision = Literal["allow", "ask", "deny", "defer"]
#: What one hook run contributed: a PreToolUse decision, or ``block`` for Post events.
RunDecision = Literal["allow", "ask", "deny", "defer", "block"]
#: Claude Code's three outcomes of a hook run.
Outcome = Literal["success", "blocking_error", "non_blocking_error", "background"]
#: Why a hook did not run properly. With ``hookFailure: closed`` each one blocks.
Failure = Literal[
    "timeout", "crash", "not_found", "not_executable", "invalid_json", "spawn_error",
    "unsupported", "json_on_error", "http_error", "url_not_allowed",
]
Behavior = Literal["allow", "ask", "deny"]


@dataclass(frozen=True, slots=True)
class HookRef:
    """Which configured hook: its command and where it was configured (``file:line``)."""

    command: str
    source: str

    def __str__(self) -> str:
        return f"`{self.command}` ({self.source})"

    def to_json(self) -> dict[str, Any]:
        return {"command": self.command, "source": self.source}


@dataclass(frozen=True, slots=True)
class HookRun:
    """One hook process: what ran, how it ended and what it said.

    ``exit_code`` is the shell's exit status (None when the hook timed out or
    never started); ``signal`` is set when the process was killed by a signal.
    ``decision`` is this hook's own contribution (``block`` for Post events).
    ``updated_input`` / ``updated_tool_output`` / ``additional_context`` come
    from valid JSON output only.
    """

    event: HookEvent
    command: str
    source: str
    matcher: str
    outcome: Outcome
    duration_ms: int
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    failure: Failure | None = None
    decision: RunDecision | None = None
    reason: str | None = None
    error: str | None = None
    updated_input: Mapping[str, Any] | None = None
    updated_tool_output: Any = None
    additional_context: str | None = None
    system_message: str | None = None
    stop: bool = False
    stop_reason: str | None = None
    #: PermissionRequest allow: Claude Code's PermissionUpdate entries, as given
    updated_permissions: tuple[Mapping[str, Any], ...] = ()

    @property
    def ref(self) -> HookRef:
        return HookRef(self.command, self.source)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event": self.event,
            "command": self.command,
            "source": self.source,
            "matcher": self.matcher,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "duration_ms": self.duration_ms,
            "timed_out": self.timed_out,
            "failure": self.failure,
            "decision": self.decision,
            "reason": self.reason,
            "error": self.error,
        }
        if self.updated_input is not None:
            out["updated_input"] = dict(self.updated_input)
        if self.updated_tool_output is not None:
            out["updated_tool_output"] = self.updated_tool_output
        if self.additional_context is not None:
            out["additional_context"] = self.additional_context
        if self.system_message is not None:
            out["system_message"] = self.system_message
        if self.stop:
            out["stop"] = True
            out["stop_reason"] = self.stop_reason
        if self.updated_permissions:
            out["updated_permissions"] = [dict(e) for e in self.updated_permissions]
        return out


@dataclass(frozen=True, slots=True)
class SkippedHook:
    """A hook whose matcher matched but that did not run, and why."""

    event: HookEvent
    command: str
    source: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "command": self.command,
            "source": self.source,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class PreToolUseResult:
    """Every PreToolUse (or PermissionRequest) hook of one call, merged.

    ``decision``: deny > defer > ask > allow over all runs (None: no hook gave
    one); ``decided_by`` is the first hook, in config order, that gave it.
    ``updated_input``: the input after every rewrite applied in config order
    (None: no hook rewrote it). ``runs`` are in config order.
    """

    decision: PreDecision | None = None
    reason: str | None = None
    decided_by: HookRef | None = None
    updated_input: Mapping[str, Any] | None = None
    additional_context: tuple[str, ...] = ()
    system_messages: tuple[str, ...] = ()
    stop: bool = False
    runs: tuple[HookRun, ...] = ()
    skipped: tuple[SkippedHook, ...] = ()
    problems: tuple[str, ...] = ()
    event: HookEvent = "PreToolUse"
    #: the first hook (config order) that said ``continue: false``, and its stopReason
    stopped_by: HookRef | None = None
    stop_reason: str | None = None
    #: PermissionRequest allow: the PermissionUpdate entries of the allowing hooks
    updated_permissions: tuple[Mapping[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "decision": self.decision,
            "reason": self.reason,
            "decided_by": self.decided_by.to_json() if self.decided_by else None,
            "updated_input": dict(self.updated_input) if self.updated_input is not None else None,
            "additional_context": list(self.additional_context),
            "system_messages": list(self.system_messages),
            "stop": self.stop,
            **_stop_json(self.stopped_by, self.stop_reason),
            "runs": [r.to_json() for r in self.runs],
            "skipped": [s.to_json() for s in self.skipped],
            "problems": list(self.problems),
        }


@dataclass(frozen=True, slots=True)
class PostToolResult:
    """Every hook of one PostToolUse, PostToolUseFailure or PostToolBatch event, merged.

    ``blocked``: a hook exited 2, said ``decision: block`` (or failed with
    ``hookFailure: closed``); the tool already ran, so this is feedback, with
    ``reason``. ``updated_tool_output``: the last replacement in config order.
    """

    event: HookEvent
    blocked: bool = False
    reason: str | None = None
    decided_by: HookRef | None = None
    additional_context: tuple[str, ...] = ()
    updated_tool_output: Any = None
    system_messages: tuple[str, ...] = ()
    stop: bool = False
    runs: tuple[HookRun, ...] = ()
    skipped: tuple[SkippedHook, ...] = ()
    problems: tuple[str, ...] = ()
    stopped_by: HookRef | None = None
    stop_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "blocked": self.blocked,
            "reason": self.reason,
            "decided_by": self.decided_by.to_json() if self.decided_by else None,
            "additional_context": list(self.additional_context),
            "updated_tool_output": self.updated_tool_output,
            "system_messages": list(self.system_messages),
            "stop": self.stop,
            **_stop_json(self.stopped_by, self.stop_reason),
            "runs": [r.to_json() for r in self.runs],
            "skipped": [s.to_json() for s in self.skipped],
            "problems": list(self.problems),
        }


def _stop_json(by: HookRef | None, reason: str | None) -> dict[str, Any]:
    return {"stopped_by": by.to_json(), "stop_reason": reason} if by is not None else {}


@dataclass(frozen=True, slots=True)
class StopRequest:
    """A hook said ``continue: false`` (or PostToolBatch blocked): the run stops there.

    ``event`` is where it was said; ``reason`` the hook's ``stopReason`` (or why)."""

    event: HookEvent
    hook: HookRef
    reason: str

    @property
    def message(self) -> str:
        return f"stopped by {self.event} hook {self.hook}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"event": self.event, **self.hook.to_json(), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class BatchCall:
    """One call of a concurrent run, as PostToolBatch hooks receive it."""

    tool_name: str
    tool_input: Mapping[str, Any]
    tool_use_id: str
    tool_response: Any

    def to_json(self) -> dict[str, Any]:
        return {
            "tool_name": self.tool_name,
            "tool_input": dict(self.tool_input),
            "tool_use_id": self.tool_use_id,
            "tool_response": self.tool_response,
        }


@dataclass(frozen=True, slots=True)
class FinalDecidedBy:
    """Who decided a call: ``kind`` is a permission kind (rule, mode, readonly,
    boundary, protected, default) or ``hook``; for a hook ``rule`` is its command."""

    kind: str
    rule: str | None = None
    source: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "rule": self.rule, "source": self.source}


@dataclass(frozen=True, slots=True)
class FinalDecision:
    """The permission engine's decision combined with the PreToolUse hooks' one.

    ``notes`` say what the hooks tried and what became of it (for the trace).
    """

    decision: Behavior
    reason: str
    decided_by: FinalDecidedBy
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "reason": self.reason,
            "decided_by": self.decided_by.to_json(),
            "notes": list(self.notes),
        }
