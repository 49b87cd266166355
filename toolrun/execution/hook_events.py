"""What hooks do to a run beyond one call's decision (the executor calls these).

* **Stop.** ``continue: false`` from a hook of any event (and a PostToolBatch block)
  stops the run: every call that has not started gets an ``interrupted`` result that
  names the hook and its ``stopReason`` (:func:`stopped_result`); calls already running
  finish. The run exits :data:`~toolrun.errors.ExitCode.HOOK_STOPPED` (6).
* **Session events.** SessionStart (``source: startup``) before the first call,
  Stop (``stop_hook_active: false``) and SessionEnd (``reason: other``) after the last;
  Stop is skipped when the run was interrupted, as Claude Code skips it on a user
  interrupt. A dry run runs none of them (it runs PreToolUse hooks only).
* **Session rules.** A PermissionRequest allow's ``updatedPermissions``
  (:func:`apply_permission_updates`) adds rules for the rest of the run under the
  guard of "always": an allow rule only when it is one toolrun suggested for that call
  (never wider than the call asked about), deny and ask rules always (they only
  tighten). Nothing that could widen (removing rules, a mode, directories) is applied,
  and nothing is written to a settings file.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolrun.execution.results import CallDecision, DecidedBy

if TYPE_CHECKING:
    from toolrun.hooks import HookRunner, PostToolResult, PreToolUseResult
    from toolrun.hooks.models import HookRun, StopRequest

#: PostToolUseFailure's ``error`` is capped as Claude Code caps it (middle elided)
ERROR_LIMIT = 10_000


class HookStops:
    """The run's stop, once a hook asked for it (the first one wins), journalled."""

    def __init__(self) -> None:
        self.request: StopRequest | None = None

    def note(self, result: PreToolUseResult | PostToolResult | None, journal: Any) -> bool:
        """Record ``result``'s stop if it asks for one; True when the run is stopped."""
        if result is not None and self.request is None:
            from toolrun.hooks.merge import stop_request

            found = stop_request(result)
            if found is not None:
                self.request = found
                if journal is not None:
                    journal.write({"event": "hook_stop", "stopped": found.to_json()})
        return self.request is not None

    def decision(self) -> CallDecision:
        stop = self.request
        assert stop is not None
        return CallDecision(
            "ask", stop.message, DecidedBy("stop", stop.hook.command, stop.hook.source)
        )

    def fields(self) -> dict[str, Any]:
        """The result fields of a call the stop kept from starting."""
        stop = self.request
        assert stop is not None
        return {
            "error": f"{stop.message}; the call did not run",
            "aborted_before_launch": True,
            "metadata": {"stopped_by": stop.to_json()},
        }


def failure_error(tool: str, error: str | None, output: str, metadata: Mapping[str, Any]) -> str:
    """PostToolUseFailure's ``error`` as Claude Code gives it: for Bash ``Exit code N`` then
    what the command printed (stdout and stderr as one block, as toolrun's Bash merges
    them); for other tools the error, then any output."""
    code = metadata.get("exit_code")
    if tool == "Bash" and isinstance(code, int):
        head = f"Exit code {code}"
    else:
        head = error or "failed"
    text = f"{head}\n{output.rstrip()}" if output.strip() else head
    if len(text) > ERROR_LIMIT:
        half = ERROR_LIMIT // 2
        cut = len(text) - 2 * half
        text = f"{text[:half]}... [{cut} characters truncated] ...{text[-half:]}"
    return text


@contextlib.asynccontextmanager
async def session_hooks(
    hooks: HookRunner | None, stops: HookStops, executor: Any, *, dry_run: bool
) -> AsyncIterator[None]:
    """SessionStart before the body, Stop and SessionEnd after it; ``async`` hooks run
    inside and are waited for at the end (cancelled if the run was interrupted)."""
    if hooks is None or dry_run:
        yield
        return

    def journal(record: dict[str, Any]) -> None:
        if executor.journal is not None:
            executor.journal.write(record)

    def background_done(run: HookRun) -> None:
        journal({"event": "async_hook", "run_id": executor.run_id, "hook": run.to_json()})

    hooks.on_background = background_done
    async with hooks.background():
        if hooks.has_hooks("SessionStart"):
            started = await hooks.session_event("SessionStart", source="startup")
            journal({"event": "SessionStart", "run_id": executor.run_id, **started.to_json()})
            stops.note(started, executor.journal)
        try:
            yield
        finally:
            if not executor.interrupted and hooks.has_hooks("Stop"):
                ended = await hooks.session_event(
                    "Stop", stop_hook_active=False, last_assistant_message=""
                )
                journal({"event": "Stop", "run_id": executor.run_id, **ended.to_json()})
            if hooks.has_hooks("SessionEnd"):
                ended = await hooks.session_event("SessionEnd", reason="other")
                journal({"event": "SessionEnd", "run_id": executor.run_id, **ended.to_json()})
            if executor.interrupted:
                hooks.cancel_background()


def suggested_rules(updates: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """The allow rules of ``permission_suggestions`` (what "always" would add), as text."""
    from toolrun.permissions.suggest import escape_content

    found = set()
    for update in updates:
        if update.get("type") != "addRules" or update.get("behavior") != "allow":
            continue
        for rule in update.get("rules") or ():
            found.add(_rule_text(rule, escape_content))
    return frozenset(found)


def _rule_text(rule: Any, escape: Any) -> str:
    if not isinstance(rule, Mapping) or not isinstance(rule.get("toolName"), str):
        return ""
    tool: str = rule["toolName"]
    content = rule.get("ruleContent")
    if content is None:
        return tool
    return f"{tool}({escape(str(content))})"


def apply_permission_updates(
    decider: Any, entries: Sequence[Mapping[str, Any]], suggested: frozenset[str]
) -> tuple[dict[str, Any], ...]:
    """Apply a PermissionRequest hook's ``updatedPermissions`` for the rest of the run;
    one note per entry (applied or not, and why), for the result and the journal."""
    from toolrun.permissions.grammar import RuleSyntaxError, parse_rule

    notes: list[dict[str, Any]] = []
    add_rules = getattr(decider, "add_rules_for_run", None)
    for entry in entries:
        kind, behavior = entry.get("type"), entry.get("behavior")
        note: dict[str, Any] = {"update": dict(entry)}
        notes.append(note)
        if kind not in ("addRules", "replaceRules"):
            note["applied"] = []
            note["why"] = (
                f"{kind} is not applied: it could widen what runs (toolrun only adds "
                "rules, under the guard of 'always')"
            )
            continue
        if behavior not in ("allow", "ask", "deny") or add_rules is None:
            note["applied"], note["why"] = [], f"behavior {behavior!r} is not allow, ask or deny"
            continue
        applied, refused = [], []
        for rule in entry.get("rules") or ():
            from toolrun.permissions.suggest import escape_content

            text = _rule_text(rule, escape_content)
            try:
                parse_rule(text, behavior=behavior)
            except RuleSyntaxError as exc:
                refused.append({"rule": text or repr(rule), "why": str(exc)})
                continue
            if behavior == "allow" and text not in suggested:
                # the guard of "always": never more than the call that was asked about
                refused.append({
                    "rule": text,
                    "why": "not a rule toolrun suggested for this call: a session allow "
                    "rule is never wider than 'always' would add",
                })  # fmt: skip
                continue
            applied.append(text)
        if applied:
            add_rules(behavior, applied)
        note["applied"] = applied
        if refused:
            note["refused"] = refused
        destination = entry.get("destination")
        if destination not in (None, "session"):
            note["why"] = f"destination {destination}: applied for this run only (no file written)"
        elif kind == "replaceRules":
            note["why"] = "replaceRules: the rules are added; toolrun removes none"
    return tuple(notes)
