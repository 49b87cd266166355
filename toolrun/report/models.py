"""What a check decided: for each call, each input (a plan, a transcript) and the whole run.

Plain data below the commands and renderers: ``toolrun check`` builds these, the
renderers (JUnit, GitHub annotations, the JSON report) and the policy diff read them,
``--merge-reports`` rebuilds them from JSON. No click and no printing here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from toolrun.errors import ExitCode, Location, Problem

if TYPE_CHECKING:
    from toolrun.execution.depends import Reads, Writes
    from toolrun.report.shards import Shard


FAIL_ON = ("deny", "ask", "never")


#: what a part of a split plan keeps of one call for the marks across parts
Deps = tuple["Reads | None", "Writes | None", bool]


class CallCheck(NamedTuple):
    """What was decided for one call: plain data, cheap to keep and to send between processes."""

    position: int  # 0-based index in its plan (the "index" of a result record)
    id: str
    tool: str
    input: Mapping[str, Any]
    decision: str  # allow | ask | deny
    kind: str  # who decided: rule, mode, hook, readonly, ...
    rule: str | None
    source: str | None
    reason: str
    status: str  # dry run: skipped (allow, ask), denied, error (not admitted)
    error: str | None
    line: int
    column: int
    turn: int  # 1-based
    run: int  # 1-based within the plan; 0: not admitted (over the turn's call limit)
    run_kind: str  # concurrent | exclusive | ""
    execution_id: str
    hooks: tuple[Mapping[str, Any], ...] = ()
    # (field, as recorded, as decided) for each value of a transcript rebased onto the
    # workspace; the field "cwd" is the directory the call was recorded in
    rebased: tuple[tuple[str, str, str], ...] = ()
    origin: str = ""  # "sidechain", "subagent FILE": not the session's main thread
    file: str = ""  # the file the call was read from, when not the input itself
    # a part of a split plan only, until its parts are joined (``split_check.joined``)
    deps: Deps | None = None
    # Bash: where the call would run ("read-only jail", "workspace jail", "sandbox",
    # "unsandboxed") and why; None for the other tools and for a deny (#25)
    runs_in: str | None = None
    runs_in_why: str | None = None

    @property
    def target(self) -> str:
        """The main argument, shortened (the command, the path, ...): worked out when shown,
        since a JSON report never shows it."""
        from toolrun.builtin_fields import target_of

        return target_of(self.tool, self.input, 60)

    def why(self) -> str:
        """The reason, naming the rule and its source when one decided."""
        reason = self.reason or f"would {self.decision}"
        if self.rule and self.rule not in reason:
            reason += f" (rule {self.rule}" + (f" from {self.source})" if self.source else ")")
        return reason

    def fails(self, fail_on: str) -> bool:
        """Whether this call fails the check under ``--fail-on``."""
        return decision_fails(self.decision, fail_on)


_decision = attrgetter("decision")


def decision_fails(decision: str, fail_on: str) -> bool:
    """Whether a call so decided fails the check under ``--fail-on``."""
    if fail_on == "never":
        return False
    return decision == "deny" or (fail_on == "ask" and decision == "ask")


@dataclass(frozen=True, slots=True)
class PlanCheck:
    """One input: its calls as decided, or the problems that kept it from being checked."""

    file: str
    format: str | None = None
    name: str | None = None
    turns: int = 0
    runs: tuple[tuple[int, str, int], ...] = ()  # (turn, kind, calls) in order
    calls: tuple[CallCheck, ...] = ()
    problems: tuple[Problem, ...] = ()
    wall_ms: float = 0.0
    warnings: tuple[Problem, ...] = ()  # records of a session log that were skipped

    def to_json(self) -> dict[str, Any]:
        """Plain data (what a worker process sends back)."""
        return {
            "file": self.file,
            "format": self.format,
            "name": self.name,
            "turns": self.turns,
            "runs": [list(r) for r in self.runs],
            "calls": list(self.calls),
            "problems": [_problem_json(p) for p in self.problems],
            "wall_ms": self.wall_ms,
            "warnings": [_problem_json(p) for p in self.warnings],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlanCheck:
        return cls(
            file=data["file"],
            format=data["format"],
            name=data["name"],
            turns=data["turns"],
            runs=tuple((r[0], r[1], r[2]) for r in data["runs"]),
            calls=tuple(
                c if isinstance(c, CallCheck) else _call_from_json(c) for c in data["calls"]
            ),
            problems=tuple(_problem_from_json(p) for p in data["problems"]),
            wall_ms=data["wall_ms"],
            warnings=tuple(_problem_from_json(p) for p in data["warnings"]),
        )


def _call_from_json(fields: Sequence[Any]) -> CallCheck:
    call = CallCheck(*fields)
    return call._replace(
        hooks=tuple(call.hooks), rebased=tuple((f, a, b) for f, a, b in call.rebased)
    )


def _problem_json(p: Problem) -> dict[str, Any]:
    loc = p.location
    return {
        "file": loc.file if loc else None,
        "line": loc.line if loc else None,
        "column": loc.column if loc else None,
        "path": p.path,
        "message": p.message,
    }


def _problem_from_json(data: Mapping[str, Any]) -> Problem:
    loc = Location(data["file"], data["line"], data["column"]) if data["line"] is not None else None
    return Problem(loc, data["path"], data["message"])


@dataclass(frozen=True, slots=True)
class CheckReport:
    run_id: str
    fail_on: str
    plans: tuple[PlanCheck, ...]
    wall_ms: float
    #: the config's warnings (unknown keys, ignored Claude Code keys, managed-only locks)
    config_warnings: tuple[str, ...] = ()
    config_notes: tuple[Problem, ...] = ()  # the same, located (for CI annotations)
    config_files: tuple[str, ...] = ()  # the config files that were read
    config_digest: str = ""  # their names and contents (shards merge only under one config)
    shard: Shard | None = None  # --shard: which one, and where its inputs were in the whole

    @property
    def problems(self) -> Iterator[Problem]:
        for plan in self.plans:
            yield from plan.problems

    @property
    def calls(self) -> Iterator[tuple[PlanCheck, CallCheck]]:
        for plan in self.plans:
            for call in plan.calls:
                yield plan, call

    def failing(self) -> Iterator[tuple[PlanCheck, CallCheck]]:
        for plan, call in self.calls:
            if call.fails(self.fail_on):
                yield plan, call

    def decided(self) -> Counter[str]:
        """Calls per decision, each decision in the order it first comes."""
        out: Counter[str] = Counter()
        for plan in self.plans:
            out.update(map(_decision, plan.calls))  # (a third of a loop's time, 100,000 calls)
        return out

    def counts(self) -> dict[str, int]:
        """Calls per decision, failing calls, invalid inputs and their problems."""
        out = {"calls": 0, "allow": 0, "ask": 0, "deny": 0, "failing": 0}
        for decision, n in self.decided().items():
            out[decision] = n
            out["calls"] += n
            out["failing"] += n if decision_fails(decision, self.fail_on) else 0
        out["plans"] = len(self.plans)
        out["invalid"] = sum(1 for p in self.plans if p.problems)
        out["problems"] = sum(len(p.problems) for p in self.plans)
        out["warnings"] = sum(len(p.warnings) for p in self.plans)
        return out

    def enforced(self) -> tuple[bool | None, str | None]:
        """What exec here could claim of its jails (#25): (False, why) when a call meant
        for a jail would run without one, True when every such call would run in one,
        None when no call is allowed on toolrun's judgement."""
        from toolrun.execution.results import JAIL_PLACES, NO_JAIL

        claim: bool | None = None
        for _, call in self.calls:
            if call.runs_in in JAIL_PLACES:
                claim = True
            elif call.runs_in_why is not None and NO_JAIL in call.runs_in_why:
                return False, call.runs_in_why.split(NO_JAIL, 1)[1]
        return claim, None

    def not_failing(self, counts: Mapping[str, int] | None = None) -> dict[str, int]:
        """The asks and denies ``--fail-on`` lets through (deny: the asks; never: both),
        so that a summary never says "nothing fails" of what it let pass (#26)."""
        c = counts if counts is not None else self.counts()
        return {
            "deny": c["deny"] if self.fail_on == "never" else 0,
            "ask": c["ask"] if self.fail_on in ("deny", "never") else 0,
        }

    @property
    def exit_code(self) -> ExitCode:
        if any(p.problems for p in self.plans):
            # An input that could not be checked at all is what CI must report first.
            return ExitCode.INVALID
        return ExitCode.combine(
            ExitCode.DENIED if decision == "deny" else ExitCode.ASK
            for decision in self.decided()
            if decision_fails(decision, self.fail_on)
        )

