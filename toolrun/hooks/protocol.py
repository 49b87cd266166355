"""Claude Code's hook protocol: the JSON a hook reads, and what its exit code and
output mean (docs/hooks "Exit code output", "JSON output").

* exit 0: stdout is JSON only if its first non-whitespace character is ``{``,
  otherwise plain text (SessionStart: context; else ignored);
* exit 2: a blocking error, stderr is the reason (PreToolUse: deny; Post
  events: ``block``); any JSON is ignored;
* any other code: a non-blocking error, and any JSON it printed is ignored
  (Claude Code reads JSON only on exit 0: exit 1 with a deny is no deny);
* failures: a timeout, a crash (killed by a signal, or the shell's 129-192
  report of one), exit 127 (command not found), exit 126 (not executable), a
  hook that cannot be started, invalid JSON (stdout starting with ``{`` that
  does not parse, or has the wrong shape) and JSON printed with a non-zero exit
  (the hook meant to say something and failed). With ``hookFailure: open`` they
  are non-blocking errors; with ``closed`` each one blocks (PreToolUse: deny),
  naming the hook.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolrun import boundedjson
from toolrun.errors import UntrustedJSONError
from toolrun.hooks.models import BatchCall, Failure, HookEvent, HookRun, RunDecision
from toolrun.hooks.process import MAX_OUTPUT_BYTES, ProcessResult

FailureMode = Literal["open", "closed"]
PRE_DECISIONS = ("allow", "deny", "ask", "defer")
_PRE: dict[str, RunDecision] = {"allow": "allow", "deny": "deny", "ask": "ask", "defer": "defer"}
_LEGACY: dict[str, RunDecision] = {"approve": "allow", "block": "deny"}
_REASON_LIMIT = 10_000
#: Events whose block is a denial of the call (exit 2 of a PermissionRequest hook denies:
#: failing closed, as a blocking error should).
_DECIDING = ("PreToolUse", "PermissionRequest")
#: Events of the run, not of a call: no tool fields (the matcher reads ``source`` /
#: ``reason``; ``if`` never runs there, as in Claude Code).
SESSION_EVENTS = ("SessionStart", "SessionEnd", "Stop")


def _jsonable(value: Any) -> Any:
    """``json.dumps`` fallback for tool responses that are not plain JSON."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def permission_updates(rules: Sequence[str]) -> list[dict[str, Any]]:
    """Suggested allow rules as Claude Code's ``permission_suggestions`` (PermissionUpdate
    objects: ``addRules`` for this session), which a PermissionRequest hook may echo back."""
    from toolrun.permissions.grammar import RuleSyntaxError, parse_rule

    entries: list[dict[str, Any]] = []
    for text in rules:
        try:
            parsed = parse_rule(text, behavior="allow")
        except RuleSyntaxError:  # a suggestion is always a rule toolrun wrote; skip if not
            continue
        entry: dict[str, Any] = {"toolName": parsed.tool}
        if parsed.content is not None:
            entry["ruleContent"] = parsed.content
        entries.append(entry)
    if not entries:
        return []
    return [{"type": "addRules", "rules": entries, "behavior": "allow", "destination": "session"}]


def build_input(
    event: HookEvent,
    *,
    session_id: str,
    cwd: Path | str,
    permission_mode: str,
    tool_name: str | None = None,
    tool_input: Mapping[str, Any] | None = None,
    tool_use_id: str | None = None,
    tool_response: Any = None,
    error: str | None = None,
    tool_calls: Sequence[BatchCall] | None = None,
    transcript_path: str | None = None,
    duration_ms: int | None = None,
    permission_suggestions: Sequence[Mapping[str, Any]] | None = None,
    session_fields: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The stdin object for one event (fields as Claude Code names them).

    ``session_fields``: SessionStart's ``source``, SessionEnd's ``reason``, Stop's
    ``stop_hook_active`` and ``last_assistant_message``.

    ``transcript_path`` is the run's journal (null when the run keeps none).
    """
    payload: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": transcript_path,
        "cwd": str(cwd),
        "hook_event_name": event,
        "permission_mode": permission_mode,
    }
    if event == "PostToolBatch":
        payload["tool_calls"] = [c.to_json() for c in tool_calls or ()]
        return payload
    if event in SESSION_EVENTS:
        payload.update(session_fields or {})
        return payload
    payload["tool_name"] = tool_name
    payload["tool_input"] = dict(tool_input or {})
    if event == "PermissionRequest":  # Claude Code sends no tool_use_id here
        payload["permission_suggestions"] = list(permission_suggestions or ())
        return payload
    payload["tool_use_id"] = tool_use_id
    if event == "PostToolUse":
        payload["tool_response"] = tool_response
    elif event == "PostToolUseFailure":
        payload["error"] = error or ""
        payload["is_interrupt"] = False
    if duration_ms is not None and event in ("PostToolUse", "PostToolUseFailure"):
        payload["duration_ms"] = duration_ms
    return payload


def encode_input(payload: Mapping[str, Any]) -> bytes:
    # a name that is not UTF-8 (a surrogate escape) goes as a JSON \udcXX escape
    text = json.dumps(payload, default=_jsonable, ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace")


# ---------------------------------------------------------------------- output


@dataclass(frozen=True, slots=True)
class HookOutput:
    """The fields toolrun uses from a hook's JSON output (already validated)."""

    decision: RunDecision | None = None
    reason: str | None = None
    updated_input: Mapping[str, Any] | None = None
    updated_tool_output: Any = None
    additional_context: str | None = None
    system_message: str | None = None
    stop: bool = False
    stop_reason: str | None = None
    updated_permissions: tuple[Mapping[str, Any], ...] = ()


class _Shape(ValueError):
    """The JSON parsed but does not have the documented shape."""


def _opt(obj: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = obj.get(key)
    if value is not None and not isinstance(value, kind):
        raise _Shape(f"{where}{key} must be a {_TYPE_NAMES.get(kind, kind.__name__)}, "
                     f"not {type(value).__name__}")
    return value


_TYPE_NAMES = {str: "string", bool: "boolean", dict: "JSON object"}


def parse_output(event: HookEvent, data: Mapping[str, Any]) -> HookOutput:
    """Validate a hook's JSON object for ``event``; raises ``ValueError`` on a wrong shape."""
    cont = _opt(data, "continue", bool, "")
    stop_reason = _opt(data, "stopReason", str, "")
    system_message = _opt(data, "systemMessage", str, "")
    legacy = _opt(data, "decision", str, "")
    reason = _opt(data, "reason", str, "")
    specific = _opt(data, "hookSpecificOutput", dict, "") or {}
    where = "hookSpecificOutput."
    name = _opt(specific, "hookEventName", str, where)
    if name is not None and name != event:
        raise _Shape(f"hookSpecificOutput.hookEventName is {name!r}, expected {event!r}")
    context = _opt(specific, "additionalContext", str, where)
    decision: RunDecision | None = None
    updated_input: Mapping[str, Any] | None = None
    updated_output: Any = None
    permissions: tuple[Mapping[str, Any], ...] = ()
    if event == "PreToolUse":
        if legacy is not None:
            if legacy not in _LEGACY:
                raise _Shape(f"decision must be 'approve' or 'block', not {legacy!r}")
            decision = _LEGACY[legacy]
        wanted = _opt(specific, "permissionDecision", str, where)
        if wanted is not None:
            if wanted not in _PRE:
                raise _Shape(
                    f"hookSpecificOutput.permissionDecision must be one of "
                    f"{', '.join(PRE_DECISIONS)}, not {wanted!r}"
                )
            decision = _PRE[wanted]
            reason = _opt(specific, "permissionDecisionReason", str, where) or reason
        updated_input = _opt(specific, "updatedInput", dict, where)
    elif event == "PermissionRequest":
        answer = _opt(specific, "decision", dict, where) or {}
        where = "hookSpecificOutput.decision."
        behavior = _opt(answer, "behavior", str, where)
        if behavior is not None and behavior not in ("allow", "deny"):
            raise _Shape(f"{where}behavior must be 'allow' or 'deny', not {behavior!r}")
        decision = _PRE[behavior] if behavior is not None else None
        reason = _opt(answer, "message", str, where) or reason
        updated_input = _opt(answer, "updatedInput", dict, where)
        if updated_input is not None and behavior != "allow":
            updated_input = None  # Claude Code applies updatedInput only with allow
        permissions = _permission_entries(answer.get("updatedPermissions"), where)
        if behavior != "allow":
            permissions = ()  # for "allow" only, as in Claude Code
        if behavior == "deny" and _opt(answer, "interrupt", bool, where):
            cont = False  # ``interrupt: true`` with a deny stops the agent
            stop_reason = stop_reason or reason
    else:
        if legacy is not None:
            if legacy not in ("block", "approve"):
                raise _Shape(f"decision must be 'block', not {legacy!r}")
            decision = "block" if legacy == "block" else None
        if event == "PostToolUse":
            updated_output = specific.get(
                "updatedToolOutput", specific.get("updatedMCPToolOutput")
            )
    return HookOutput(
        decision=decision,
        reason=reason,
        updated_input=updated_input,
        updated_tool_output=updated_output,
        additional_context=context,
        system_message=system_message,
        stop=cont is False,
        stop_reason=stop_reason,
        updated_permissions=permissions,
    )


_PERMISSION_TYPES = (
    "addRules", "replaceRules", "removeRules", "setMode", "addDirectories", "removeDirectories"
)  # fmt: skip


def _permission_entries(value: Any, where: str) -> tuple[Mapping[str, Any], ...]:
    """``updatedPermissions``: a list of PermissionUpdate objects, each with a known
    ``type`` (what toolrun does with each is the executor's: it never widens)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _Shape(f"{where}updatedPermissions must be a list, not {type(value).__name__}")
    entries = []
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise _Shape(f"{where}updatedPermissions[{i}] must be a JSON object")
        kind = entry.get("type")
        if kind not in _PERMISSION_TYPES:
            raise _Shape(
                f"{where}updatedPermissions[{i}].type must be one of "
                f"{', '.join(_PERMISSION_TYPES)}, not {kind!r}"
            )
        entries.append(entry)
    return tuple(entries)


def _load_json(stdout: str) -> tuple[Mapping[str, Any] | None, str | None]:
    """(object, None) for JSON output, (None, error) for invalid JSON, (None, None) for text."""
    text = stdout.strip()
    if not text.startswith("{"):
        return None, None
    try:
        data = boundedjson.loads(text, max_bytes=MAX_OUTPUT_BYTES)
    except UntrustedJSONError as exc:  # too deep is bad JSON too (per hookFailure)
        return None, f"stdout starts with {{ but is {_unusable(exc)}"
    if not isinstance(data, dict):
        return None, "stdout is not a JSON object"
    return data, None


def _unusable(exc: UntrustedJSONError) -> str:
    why = str(exc)
    return why if why.startswith("not ") else f"JSON {why}"


def _trim(text: str, limit: int = _REASON_LIMIT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _crashed(code: int) -> bool:
    return code < 0 or 128 < code <= 128 + 64


def _describe_failure(failure: Failure, result: ProcessResult, timeout: float) -> str:
    code = result.returncode
    if failure == "timeout":
        return f"timed out after {timeout:g} s"
    if failure == "spawn_error":
        return f"could not be started: {result.spawn_error}"
    if failure == "crash":
        assert code is not None
        number = -code if code < 0 else code - 128
        return f"was killed by signal {number}"
    if failure == "not_found":
        return "exited 127: command not found"
    if failure == "not_executable":
        return "exited 126: command not executable"
    if failure == "json_on_error":
        return f"exited {code}"
    if failure == "http_error":
        return "failed"
    if failure == "url_not_allowed":
        return "was not run"
    return "printed invalid JSON"


@dataclass(frozen=True, slots=True)
class HookIdentity:
    event: HookEvent
    command: str
    source: str
    matcher: str


def interpret(
    who: HookIdentity, result: ProcessResult, *, failure_mode: FailureMode, timeout: float
) -> HookRun:
    """Turn a finished process into a :class:`HookRun`, exactly per the protocol."""
    event = who.event
    block: RunDecision = "deny" if event in _DECIDING else "block"
    common: dict[str, Any] = {
        "event": event,
        "command": who.command,
        "source": who.source,
        "matcher": who.matcher,
        "duration_ms": result.duration_ms,
        "exit_code": result.returncode,
        "timed_out": result.timed_out,
    }
    code = result.returncode
    if code is not None and code < 0:
        common["exit_code"] = 128 - code
        common["signal"] = -code
    failure: Failure | None = None
    detail = ""
    output: HookOutput | None = None
    if result.failure in ("http_error", "url_not_allowed"):
        failure = "http_error" if result.failure == "http_error" else "url_not_allowed"
        detail = result.spawn_error or ""
    elif result.spawn_error is not None:
        failure = "spawn_error"
    elif result.timed_out or code is None:
        failure = "timeout"
    elif code == 2:
        reason = _trim(result.stderr)
        if not reason:
            data, _problem = _load_json(result.stdout)
            legacy = data.get("reason") if data is not None else None
            reason = legacy if isinstance(legacy, str) and legacy else "the hook exited 2"
        return HookRun(**common, outcome="blocking_error", decision=block, reason=reason)
    elif code == 0:
        data, problem = _load_json(result.stdout)
        if data is not None:
            try:
                output = parse_output(event, data)
            except ValueError as exc:
                problem = f"invalid hook output: {exc}"
        if problem is not None:
            failure, detail = "invalid_json", problem
        elif output is not None:
            return _from_output(common, output)
        else:
            text = result.stdout.strip()
            # plain stdout is context for SessionStart; a plain 2xx body for http hooks
            if text and (event == "SessionStart" or result.http_status is not None):
                return HookRun(**common, outcome="success", additional_context=_trim(text))
            return HookRun(**common, outcome="success")
    else:
        printed_json = result.stdout.lstrip().startswith("{")
        if _crashed(code):
            failure = "crash"
        elif code == 127:
            failure = "not_found"
        elif code == 126:
            failure = "not_executable"
        elif printed_json:
            # Claude Code reads JSON only on exit 0: what it says is not taken
            failure = "json_on_error"
            detail = "its JSON output is ignored (JSON is read only on exit 0)"
        else:
            error = f"exit code {code}"
            if result.stderr.strip():
                error += f": {_trim(result.stderr, 2000)}"
            return HookRun(**common, outcome="non_blocking_error", error=error)
    what = _describe_failure(failure, result, timeout)
    error = f"{what}: {detail}" if detail else what
    if failure in ("not_found", "not_executable", "crash", "json_on_error") and (
        result.stderr.strip()
    ):
        error += f" ({_trim(result.stderr, 2000)})"
    if failure_mode == "closed":
        reason = f"hook `{who.command}` ({who.source}) {error}; hookFailure: closed blocks the call"
        return HookRun(
            **common,
            outcome="blocking_error",
            failure=failure,
            decision=block,
            reason=reason,
            error=error,
        )
    return HookRun(**common, outcome="non_blocking_error", failure=failure, error=error)


def unsupported(who: HookIdentity, hook_type: str, *, failure_mode: FailureMode) -> HookRun:
    """A hook of a type toolrun cannot run (``prompt``, ``agent``, ...): no decision, or
    with ``hookFailure: closed`` a block, like any hook that could not do its job."""
    error = f"is a {hook_type!r} hook, which toolrun does not run"
    common: dict[str, Any] = {
        "event": who.event,
        "command": who.command,
        "source": who.source,
        "matcher": who.matcher,
        "duration_ms": 0,
        "failure": "unsupported",
        "error": error,
    }
    if failure_mode == "closed":
        return HookRun(
            **common,
            outcome="blocking_error",
            decision="deny" if who.event in _DECIDING else "block",
            reason=f"hook `{who.command}` ({who.source}) {error}; hookFailure: closed blocks "
            "the call",
        )
    return HookRun(**common, outcome="non_blocking_error")


def _from_output(common: Mapping[str, Any], output: HookOutput) -> HookRun:
    decision = output.decision
    reason = output.reason
    if output.stop and decision != "deny" and common["event"] in _DECIDING:
        # ``continue: false`` stops the agent in Claude Code; here the call does not run.
        decision = "deny"
        reason = output.stop_reason or reason or "the hook asked to stop (continue: false)"
    return HookRun(
        **common,
        outcome="success",
        decision=decision,
        reason=_trim(reason) if reason else None,
        updated_input=output.updated_input,
        updated_tool_output=output.updated_tool_output,
        additional_context=output.additional_context,
        system_message=output.system_message,
        stop=output.stop,
        stop_reason=output.stop_reason,
        updated_permissions=output.updated_permissions,
    )
