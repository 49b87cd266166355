"""The result of one permission decision, and its trace.

Frozen data only: the resolver builds it, the CLI and the executor read it.
``Decision.rules`` (every rule considered, matched or not, and why) is worked
out on first access, from the same subjects and the same matching function
the decision used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from toolrun.dataclass_init import fast_init
from toolrun.permissions.enforce import RunsIn

if TYPE_CHECKING:
    from toolrun.permissions.readonly import BashVerdicts

Behavior = Literal["allow", "ask", "deny"]
DecidedKind = Literal[
    "rule", "mode", "readonly", "boundary", "protected", "default", "sandbox"
]


@fast_init
@dataclass(frozen=True, slots=True)
class DecidedBy:
    """Who decided a call: a rule (its text and source), the mode, a hook, the read-only
    set, ..."""

    kind: DecidedKind
    rule: str | None = None
    source: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "rule": self.rule, "source": self.source}


@fast_init
@dataclass(frozen=True, slots=True)
class TargetVerdict:
    """A file or URL a call (or a Bash sub-command) touches, and its verdict.

    ``decision`` is None for a file a Bash command names that no deny or ask rule
    and no protection concerns (it neither blocks nor approves anything).
    """

    what: str
    target: str
    access: str
    decision: Behavior | None
    decided_by: DecidedBy | None
    reason: str
    resolved: str | None = None
    inside: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "target": self.target,
            "resolved": self.resolved,
            "access": self.access,
            "inside_workspace": self.inside,
            "decision": self.decision,
            "decided_by": self.decided_by.to_json() if self.decided_by else None,
            "reason": self.reason,
        }


@fast_init
@dataclass(frozen=True, slots=True)
class SubcommandVerdict:
    """The decision on one part of a compound Bash command, and why."""

    index: int
    command: str
    context: str
    decision: Behavior
    decided_by: DecidedBy
    reason: str
    targets: tuple[TargetVerdict, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "command": self.command,
            "context": self.context or None,
            "decision": self.decision,
            "decided_by": self.decided_by.to_json(),
            "reason": self.reason,
            "targets": [t.to_json() for t in self.targets],
        }


@dataclass(frozen=True, slots=True)
class RuleTrace:
    """One rule as the explanation shows it: whether it matched what was decided."""

    text: str
    behavior: Behavior
    source: str
    matched: bool
    why: str
    shadowed: bool = False
    decisive: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.text,
            "behavior": self.behavior,
            "source": self.source,
            "matched": self.matched,
            "shadowed": self.shadowed,
            "decisive": self.decisive,
            "why": self.why,
        }


@fast_init
@dataclass(frozen=True, slots=True)
class BoundaryCheck:
    """One path checked against the workspace boundary, and whether it stays inside."""

    what: str
    path: str
    resolved: str | None
    inside: bool
    root: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "path": self.path,
            "resolved": self.resolved,
            "inside": self.inside,
            "root": self.root,
        }


@fast_init
@dataclass(frozen=True)
class Decision:
    """Allow, ask or deny for one call, with who decided and why."""

    decision: Behavior
    reason: str
    decided_by: DecidedBy
    tool: str
    input: Mapping[str, Any]
    mode: str
    mode_source: str
    workspace: str
    cwd: str
    subcommands: tuple[SubcommandVerdict, ...] = ()
    targets: tuple[TargetVerdict, ...] = ()
    boundary: tuple[BoundaryCheck, ...] = ()
    problems: tuple[str, ...] = ()
    #: Bash with ``sandbox.enabled``: where the call would run and why (None otherwise).
    sandbox: str | None = None
    #: An allow on toolrun's own judgement (no rule, hook or person allowed it), which the
    #: kernel is to make true (#25): "read-only" (the read-only set) or "workspace"
    #: (acceptEdits' file commands); None for every other decision.
    jail: str | None = None
    #: Bash: where the call runs (a jail, the user's sandbox, unsandboxed) and why; for an
    #: ask, where it runs once approved; None for a deny and for the other tools.
    runs_in: RunsIn | None = None
    #: protected paths and critical ``rm`` targets the call touches, whichever step decided:
    #: only a person may approve such a call (never --ask allow, never "always")
    protected: tuple[str, ...] = ()
    trace: Callable[[], tuple[RuleTrace, ...]] = field(
        default=tuple, compare=False, repr=False
    )
    #: Bash: the analysis the decision was made on (its read-only verdict groups the
    #: call into runs: nothing analyses the command again)
    bash: BashVerdicts | None = field(default=None, compare=False, repr=False)

    @cached_property
    def rules(self) -> tuple[RuleTrace, ...]:
        """Every rule considered, in precedence order, with why it matched or not."""
        return self.trace()

    @property
    def allowed(self) -> bool:
        return self.decision == "allow"

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "input": dict(self.input),
            "decision": self.decision,
            "reason": self.reason,
            "decided_by": self.decided_by.to_json(),
            "mode": {"name": self.mode, "source": self.mode_source},
            "workspace": self.workspace,
            "cwd": self.cwd,
            "boundary": [b.to_json() for b in self.boundary],
            "problems": list(self.problems),
            "sandbox": self.sandbox,
            "jail": self.jail,
            "runs_in": self.runs_in.place if self.runs_in is not None else None,
            "runs_in_why": self.runs_in.why if self.runs_in is not None else None,
            "protected": list(self.protected),
            "subcommands": [s.to_json() for s in self.subcommands],
            "targets": [t.to_json() for t in self.targets],
            "rules": [r.to_json() for r in self.rules],
        }
