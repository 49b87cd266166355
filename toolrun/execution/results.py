"""The result record every output format and the journal share (design §6)."""

from __future__ import annotations

import enum
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from toolrun.dataclass_init import fast_init
from toolrun.errors import Location

if TYPE_CHECKING:
    from toolrun.permissions.readonly import BashVerdicts


class Status(enum.StrEnum):
    OK = "ok"
    ERROR = "error"
    DENIED = "denied"
    #: the call asked for approval and nobody gave it (no terminal, --ask deny): exit 5
    NEEDS_APPROVAL = "needs_approval"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    SKIPPED = "skipped"


@fast_init
@dataclass(frozen=True, slots=True)
class DecidedBy:
    """Who decided: a rule (with its text and source), the mode, a hook, the user, ..."""

    kind: str
    rule: str | None = None
    source: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "rule": self.rule, "source": self.source}


@fast_init
@dataclass(frozen=True, slots=True)
class CallDecision:
    """The decision on one call as the executor keeps it: allow, ask or deny, why, who
    decided, and where an allowed call runs."""

    decision: str  # allow | ask | deny
    reason: str
    decided_by: DecidedBy
    #: (path, where it led) for each file the decision covered: the tool touches these.
    paths: tuple[tuple[str, str], ...] = ()
    #: for an ask: the narrowest allow rule(s) that would approve the call ("always" adds
    #: exactly these for the rest of the run); empty when no rule can allow it
    suggested: tuple[str, ...] = ()
    suggested_why: str = ""  # why there is no suggestion
    #: for an ask: why only a person may approve it (a protected or critical path);
    #: --ask allow never approves such a call
    protected: str | None = None
    #: the engine's :attr:`~toolrun.permissions.Decision.jail` when the engine's allow
    #: stands (no hook or person changed it): where the call must run (#25)
    jail: str | None = None
    #: where the call runs ("read-only jail", "workspace jail", "sandbox", "unsandboxed")
    #: and why, for the result's record; None: not a Bash call, or denied
    runs_in: str | None = None
    runs_in_why: str | None = None
    #: where the call runs when no jail holds it ("sandbox" or "unsandboxed"): where a
    #: judged call runs after all when no jail can be made
    configured: str | None = None
    #: Bash: the engine's analysis the decision was made on (``Decision.bash``), which a
    #: check groups the call into runs by and marks its writes from
    analysis: BashVerdicts | None = field(default=None, compare=False, repr=False)


#: The places that make toolrun's judgement true (``toolrun.permissions.enforce.Place``).
JAIL_PLACES = frozenset({"read-only jail", "workspace jail"})
#: How a place's reason goes on when a call meant for a jail ran without one (the words
#: of ``toolrun.permissions.enforce.runs_in``).
NO_JAIL = ", but no jail can be made here: "


def where_it_runs(
    decision: CallDecision, metadata: Mapping[str, Any] | None
) -> tuple[str | None, str | None]:
    """Where a Bash call ran (a call that did not run: would run) and why.

    What the run recorded wins over what the decision foresaw: ``metadata["jail"]`` (the
    jail keeper's: was the jail enforced) and ``metadata["sandbox"]`` (the user's sandbox:
    was the call sandboxed); a dry run's ``jail`` record says a call meant for a jail
    would run without one. A call a person, --ask allow or a PermissionRequest hook
    approved runs as configured.
    """
    place, why = decision.runs_in, decision.runs_in_why
    if place is None:
        if decision.decision != "allow":
            return None, None
        who = _APPROVERS.get(decision.decided_by.kind, decision.decided_by.kind)
        place, why = decision.configured or "unsandboxed", f"approved by {who}: runs as configured"
    jail = metadata.get("jail") if metadata else None
    if isinstance(jail, Mapping):
        if jail.get("enforced"):
            ran = f"{jail.get('kind') or 'read-only'} jail"
            return ran, why if ran == place else f"run in the run's {ran}"
        return _as_configured(decision, metadata, str(jail.get("reason") or "unknown"))
    sandbox = metadata.get("sandbox") if metadata else None
    if isinstance(sandbox, Mapping):  # it ran, as configured: the sandbox says where
        ran = "sandbox" if sandbox.get("sandboxed") else "unsandboxed"
        if ran != place:
            why = str(sandbox.get("warning") or sandbox.get("reason") or why)
        return ran, why
    return place, why


_APPROVERS = {"user": "the user", "flag": "--ask allow", "hook": "a PermissionRequest hook"}


def _as_configured(
    decision: CallDecision, metadata: Mapping[str, Any] | None, reason: str
) -> tuple[str, str]:
    """A call meant for a jail that ran (would run) without one: as configured."""
    sandbox = metadata.get("sandbox") if metadata else None
    if isinstance(sandbox, Mapping):
        ran = "sandbox" if sandbox.get("sandboxed") else "unsandboxed"
    else:
        ran = decision.configured or "unsandboxed"
    why = decision.runs_in_why or "allowed on toolrun's judgement"
    return ran, f"{why}{NO_JAIL}{reason}"


#: One encoder for every record: json.dumps with options builds a new one each call.
encode_json = json.JSONEncoder(ensure_ascii=False, default=str).encode


def utc_iso(ts: float | None) -> str | None:
    """UTC ISO 8601 with milliseconds, or None: the text of
    ``datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")`` with ``Z``.

    Each result needs two or three of these: the date and time up to the second are
    worked out once per second, the milliseconds each time (a third of the cost)."""
    global _last_second, _last_stamp
    if ts is None:
        return None
    last_stamp = _last_stamp
    if last_stamp[0] == ts:  # a call's start, in its "started" record and its result
        return last_stamp[1]
    if not 0 <= ts < _YEAR_10000:  # (and NaN) as datetime words or refuses it
        return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"
    # rounded as datetime.fromtimestamp rounds: to the microsecond, half to even
    frac, whole = math.modf(ts)
    second, us = int(whole), round(frac * 1e6)
    if us >= 1_000_000:
        second, us = second + 1, us - 1_000_000
    last = _last_second
    if last[0] != second:
        last = _last_second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    text = f"{last[1]}.{us // 1000:03d}Z"
    _last_stamp = (ts, text)
    return text


_YEAR_10000 = 253_402_300_800.0
# the last second utc_iso formatted, and its text (one tuple: threads see either whole)
_last_second: tuple[int, str] = (-1, "")
# the last time stamp utc_iso formatted (in its range), and its text
_last_stamp: tuple[float, str] = (math.nan, "")  # (NaN: equal to no stamp)


# (one per call, each built field by field: fast_init writes the slots directly)
@fast_init
@dataclass(frozen=True, slots=True)
class Result:
    """Exactly one per call."""

    index: int
    id: str
    execution_id: str
    run_id: str
    plan: str
    tool: str
    input: Mapping[str, Any]
    decision: str
    decided_by: DecidedBy
    status: Status
    output: str = ""
    error: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    wait_ms: float = 0.0
    duration_ms: float = 0.0
    attempts: int = 0
    aborted_before_launch: bool = False
    location: Location | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    # what hooks did: one record per event (PreToolUse, PostToolUse, ...), each with its runs
    hooks: tuple[Mapping[str, Any], ...] = ()
    additional_context: tuple[str, ...] = ()
    hook_feedback: str | None = None
    # when PreToolUse hooks rewrote the input: what the plan asked for, and who changed it
    # (``input`` is what was decided and run)
    original_input: Mapping[str, Any] | None = None
    rewritten_by: tuple[Mapping[str, Any], ...] = ()
    #: Bash: where the call ran (not run: would run): "read-only jail", "workspace jail",
    #: "sandbox" or "unsandboxed", and why (:func:`where_it_runs`); None for the other tools and
    #: for a denied call
    runs_in: str | None = None
    runs_in_why: str | None = None
    # the serialised form, made once: the journal and the output both need it (None
    # until then, and in a copy made by ``replace``)
    _line: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def verify(self) -> tuple[Mapping[str, Any], ...]:
        """What ``toolrun.autoVerify`` reported for this write (see :mod:`toolrun.verify`)."""
        return tuple(self.metadata.get("verify") or ()) if self.metadata else ()

    def json_line(self) -> str:
        """The result as one line of JSON (cached)."""
        line = self._line
        if line is None:
            line = encode_json(self.as_json())
            _set_line(self, line)
        return line

    def journal_line(self) -> str:
        """The journal record: the same keys plus ``"event": "result"``."""
        return '{"event": "result", ' + self.json_line()[1:]

    def as_json(self) -> dict[str, Any]:
        loc = self.location
        return {
            "index": self.index,
            "id": self.id,
            "execution_id": self.execution_id,
            "run_id": self.run_id,
            "plan": self.plan,
            "tool": self.tool,
            "input": dict(self.input),
            **(
                {
                    "original_input": dict(self.original_input),
                    "input_rewritten_by": [dict(h) for h in self.rewritten_by],
                }
                if self.original_input is not None
                else {}
            ),
            "decision": self.decision,
            "decided_by": self.decided_by.as_json(),
            "runs_in": self.runs_in,
            "runs_in_why": self.runs_in_why,
            "status": str(self.status),
            "output": self.output,
            "error": self.error,
            "started_at": utc_iso(self.started_at),
            "finished_at": utc_iso(self.finished_at),
            "wait_ms": round(self.wait_ms, 3),
            "duration_ms": round(self.duration_ms, 3),
            "attempts": self.attempts,
            "aborted_before_launch": self.aborted_before_launch,
            "location": (
                {"file": loc.file, "line": loc.line, "column": loc.column} if loc else None
            ),
            **_metadata_and_verify(self.metadata),
            **({"hooks": [dict(h) for h in self.hooks]} if self.hooks else {}),
            **(
                {"additional_context": list(self.additional_context)}
                if self.additional_context
                else {}
            ),
            **({"hook_feedback": self.hook_feedback} if self.hook_feedback else {}),
        }


# the slot's own setter: a frozen dataclass refuses setattr
_set_line: Callable[[Result, str], None] = Result.__dict__["_line"].__set__


def _metadata_and_verify(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata``, and autoVerify's reports (kept there by the executor) as ``verify``."""
    if not metadata:
        return {}
    if "verify" not in metadata:
        return {"metadata": dict(metadata)}
    rest = {k: v for k, v in metadata.items() if k != "verify"}
    return {**({"metadata": rest} if rest else {}), "verify": list(metadata["verify"])}
