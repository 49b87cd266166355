"""The check command as a library function: many inputs decided, nothing executed.

Every call of every input goes through the executor in dry-run mode, the one decision path
``exec`` uses (permission engine, PreToolUse hooks, partition into runs); ``check`` only
records what it decided, compactly, so that 100,000 calls fit in a small budget.

With ``jobs > 1`` inputs are checked in worker processes (spawned: the functions they run
are top-level, and what they return is plain JSON-able data); reports keep input order.
One big input is split by turns between forked processes instead (``toolrun.commands.
split_check``), forked before it is loaded so that each holds only its own turns:
automatically for a JSON plan of many calls on a machine of more than one core.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import glob
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from toolrun.errors import ExitCode, Location, PlanError, Problem
from toolrun.paths import display_path

if TYPE_CHECKING:
    import json

    from toolrun.commands.shards import Shard
    from toolrun.commands.split_check import Sink
    from toolrun.config.models import Config
    from toolrun.execution.decide import EngineDecider
    from toolrun.execution.depends import Footprint, Reads, Writes
    from toolrun.execution.executor import Executor
    from toolrun.execution.partition import Run
    from toolrun.execution.results import CallDecision, Result
    from toolrun.hooks import HookRunner, PreToolUseResult
    from toolrun.plan.importers import Imported
    from toolrun.plan.models import Call, Plan, Turn
    from toolrun.policy.diff import PolicyDiff
    from toolrun.tools.base import ToolContext
    from toolrun.tools.registry import ToolRegistry

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
        from toolrun.render.results import target_of

        return target_of(self.tool, self.input, 60)

    def why(self) -> str:
        """The reason, naming the rule and its source when one decided."""
        reason = self.reason or f"would {self.decision}"
        if self.rule and self.rule not in reason:
            reason += f" (rule {self.rule}" + (f" from {self.source})" if self.source else ")")
        return reason

    def fails(self, fail_on: str) -> bool:
        """Whether this call fails the check under ``--fail-on``."""
        if fail_on == "never":
            return False
        return self.decision == "deny" or (fail_on == "ask" and self.decision == "ask")


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
            calls=tuple(c if isinstance(c, CallCheck) else _call_from_json(c) for c in data["calls"]),
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
class CheckRequest:
    inputs: Sequence[str]  # files or glob patterns
    workspace: Path = Path(".")
    config_file: Path | None = None
    settings_files: Sequence[Path] = ()
    mode: str | None = None
    enforce: str | None = None  # --enforce; None: the config's toolrun.enforce
    source_format: str | None = None  # --from; None: detect each input
    # --transcript-cwd: the directory the inputs were recorded in (mapped onto the
    # workspace); None: the cwd a transcript records, if any
    transcript_cwd: str | None = None
    # --allow-empty: an input without calls (or of no format toolrun reads) is not invalid
    allow_empty: bool = False
    hooks: bool = True
    # processes; None: automatic (one JSON plan of SPLIT_MIN_CALLS calls or more is split
    # between two processes when the machine has two cores or more)
    jobs: int | None = 1
    fail_on: str = "deny"
    # --strict: config warnings, and a session log's unreadable records, are errors
    strict: bool = False
    managed_settings: Path | None = None
    shard: Shard | None = None  # --shard K/N: only the inputs of that shard
    # mark an allow an earlier call of its plan may change (``depends on call-N``); a
    # policy diff compares rules, not what the plan's order makes of them
    marks: bool = True


@dataclass(frozen=True, slots=True)
class CheckReport:
    run_id: str
    fail_on: str
    plans: tuple[PlanCheck, ...]
    wall_ms: float
    #: the config's warnings (unknown keys, ignored Claude Code keys, managed-only locks)
    config_warnings: tuple[str, ...] = ()
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

    def counts(self) -> dict[str, int]:
        """Calls per decision, failing calls, invalid inputs and their problems."""
        out = {"calls": 0, "allow": 0, "ask": 0, "deny": 0, "failing": 0}
        for plan in self.plans:
            for call in plan.calls:
                out[call.decision] = out.get(call.decision, 0) + 1
                out["failing"] += call.fails(self.fail_on)
            out["calls"] += len(plan.calls)
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
        codes: set[ExitCode] = set()
        if any(p.problems for p in self.plans):
            # An input that could not be checked at all is what CI must report first.
            return ExitCode.INVALID
        for _, call in self.failing():
            codes.add(ExitCode.DENIED if call.decision == "deny" else ExitCode.ASK)
            if ExitCode.DENIED in codes:
                break
        return ExitCode.combine(codes)


def result_json(run_id: str, plan: PlanCheck, call: CallCheck) -> dict[str, Any]:
    """The result record of design §6 (the keys ``exec`` uses), plus where it ran.

    Written out rather than through ``Result.as_json``: a check of 100,000 calls spent a
    third of its report building Result objects only to turn them into dicts. A test
    keeps the two the same.
    """
    out: dict[str, Any] = {
        "index": call.position,
        "id": call.id,
        "execution_id": call.execution_id,
        "run_id": run_id,
        "plan": plan.file,
        "tool": call.tool,
        "input": call.input if type(call.input) is dict else dict(call.input),
        "decision": call.decision,
        "decided_by": {"kind": call.kind, "rule": call.rule, "source": call.source},
        "runs_in": call.runs_in,
        "runs_in_why": call.runs_in_why,
        "status": call.status,
        "output": "",
        "error": call.error,
        "started_at": None,
        "finished_at": None,
        "wait_ms": 0.0,
        "duration_ms": 0.0,
        "attempts": 0,
        "aborted_before_launch": False,
        "location": (
            {"file": call.file or plan.file, "line": call.line, "column": call.column}
            if call.line
            else None
        ),
    }
    if call.hooks:
        out["hooks"] = [dict(h) for h in call.hooks]
    if call.origin:
        out["origin"] = call.origin
    if call.rebased:
        out["rebased"] = [
            {"field": f, "recorded": recorded, "rebased": new} for f, recorded, new in call.rebased
        ]
    out["reason"] = call.reason
    out["turn"] = call.turn
    out["run"] = call.run
    out["run_kind"] = call.run_kind
    return out


def result_lines(run_id: str, plan: PlanCheck) -> Callable[[CallCheck], str]:
    """``json.dumps(result_json(run_id, plan, call), ensure_ascii=False)`` for the calls of
    ``plan``, written from a template: building each record's dict only to encode it was
    more than half of a big JSON report. A call of an unusual shape (hooks, an origin,
    rebased values, a value of another type than usual) is encoded the general way; a
    property test holds the two to the same text."""
    import json.encoder

    encoder = json.JSONEncoder(ensure_ascii=False)
    text = json.encoder.encode_basestring  # (the encoder's own, for ensure_ascii=False)
    general = encoder.encode
    head = f', "run_id": {text(run_id)}, "plan": {text(plan.file)}, "tool": '
    here = text(plan.file)
    fixed = (
        ', "output": "", "error": %s, "started_at": null, "finished_at": null, "wait_ms": 0.0, '
        '"duration_ms": 0.0, "attempts": 0, "aborted_before_launch": false, "location": '
    )
    shapes: dict[tuple[type, ...], bool] = {}  # the field types of a record: as usual?
    encode_input = _value_encoder(encoder)

    def line(c: CallCheck) -> str:
        shape = tuple(map(type, c))
        usual = shapes.get(shape)
        if usual is None:
            usual = shapes[shape] = _usual_shape(shape)
        if not usual or c.hooks or c.origin or c.rebased:
            return general(result_json(run_id, plan, c))
        rule, source, error, place, why = c.rule, c.source, c.error, c.runs_in, c.runs_in_why
        if c.line:
            where = text(c.file) if c.file else here
            location = f'{{"file": {where}, "line": {c.line}, "column": {c.column}}}'
        else:
            location = "null"
        return (
            f'{{"index": {c.position}, "id": {text(c.id)}, "execution_id": '
            f"{text(c.execution_id)}{head}{text(c.tool)}, \"input\": "
            f"{encode_input(c.input if type(c.input) is dict else dict(c.input))}, "
            f'"decision": {text(c.decision)}, "decided_by": {{"kind": {text(c.kind)}, '
            f'"rule": {"null" if rule is None else text(rule)}, '
            f'"source": {"null" if source is None else text(source)}}}, '
            f'"runs_in": {"null" if place is None else text(place)}, '
            f'"runs_in_why": {"null" if why is None else text(why)}, '
            f'"status": {text(c.status)}'
            f'{fixed % ("null" if error is None else text(error))}{location}, '
            f'"reason": {text(c.reason)}, "turn": {c.turn}, "run": {c.run}, '
            f'"run_kind": {text(c.run_kind)}}}'
        )

    return line


def _value_encoder(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode`` (an encoder of ``ensure_ascii=False``, the default separators)
    for a dict or a list, its C encoder made once rather than once a call as ``encode``
    makes it (two thirds of its time on a small dict)."""
    import json.encoder

    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - an interpreter without the C accelerator
        return encoder.encode
    markers: dict[int, Any] = {}  # what catches a cycle: empty again once a value is done
    made = make(markers, encoder.default, json.encoder.encode_basestring, None, ": ", ", ",
                False, False, True)  # fmt: skip

    def encode(value: Any) -> str:
        try:
            return "".join(made(value, 0))
        except BaseException:
            markers.clear()
            raise

    return encode


_INT_FIELDS = frozenset(
    CallCheck._fields.index(f) for f in ("position", "line", "column", "turn", "run")
)
_STR_FIELDS = frozenset(
    CallCheck._fields.index(f)
    for f in ("id", "tool", "decision", "kind", "reason", "status", "run_kind",
              "execution_id", "origin", "file")
)  # fmt: skip
_OPTIONAL_FIELDS = frozenset(
    CallCheck._fields.index(f) for f in ("rule", "source", "error", "runs_in", "runs_in_why")
)


def _usual_shape(types: tuple[type, ...]) -> bool:
    """Whether a record of fields of these types is one ``result_lines`` writes from its
    template: ints, strings and optional strings where check puts them (not a bool or a
    str subclass, which the general encoder writes its own way)."""
    return len(types) == len(CallCheck._fields) and all(
        t is int if i in _INT_FIELDS
        else t is str if i in _STR_FIELDS
        else t is str or t is type(None) if i in _OPTIONAL_FIELDS
        else True
        for i, t in enumerate(types)
    )  # fmt: skip


# -- inputs ---------------------------------------------------------------------------------

_MAGIC = frozenset("*?[")


CONFIG_NAMES = ("toolrun.yaml", "toolrun.yml")


def expand_inputs(inputs: Sequence[str]) -> list[tuple[str, Path | None]]:
    """Files and glob patterns (``**`` included) to (shown name, path) in order, each file
    once; a pattern that matches no file is kept with path None."""
    out: list[tuple[str, Path | None]] = []
    seen: set[str] = set()
    for arg in inputs:
        if _MAGIC.isdisjoint(arg) or os.path.exists(arg):
            matches = [arg]
        else:
            # A toolrun.yaml beside the plans is their config, not a plan: a glob skips it
            # (naming it outright still checks it).
            matches = sorted(
                m
                for m in glob.glob(arg, recursive=True)
                if os.path.isfile(m) and os.path.basename(m) not in CONFIG_NAMES
            )
            if not matches:
                out.append((arg, None))
                continue
        for match in matches:
            shown = display_path(match)
            if shown not in seen:
                seen.add(shown)
                out.append((shown, Path(match)))
    return _without_subagent_logs(out)


def _without_subagent_logs(
    inputs: list[tuple[str, Path | None]],
) -> list[tuple[str, Path | None]]:
    """Inputs less the subagent logs of a Claude Code session that is an input too
    (``S/subagents/*.jsonl`` beside ``S.jsonl``): the session reads them as its own turns."""
    sessions = {str(p.with_suffix("")) for _, p in inputs if p is not None and p.suffix == ".jsonl"}
    return [
        (shown, p)
        for shown, p in inputs
        if p is None or p.parent.name != "subagents" or str(p.parent.parent) not in sessions
    ]


# -- checking -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Options:
    """What a worker needs to rebuild the config and decide (plain data, picklable)."""

    workspace: str
    config_file: str | None
    settings_files: tuple[str, ...]
    mode: str | None
    hooks: bool
    source_format: str | None
    run_id: str
    transcript_cwd: str | None = None
    strict: bool = False
    managed_settings: str | None = None
    # one input decided in this many processes (split by turns): 0 automatic
    split: int = 1
    marks: bool = True
    enforce: str | None = None
    allow_empty: bool = False


@dataclass
class _State:
    config: Config
    registry: ToolRegistry
    decider: _CheckDecider
    hooks: HookRunner | None


_STATES: dict[_Options, _State] = {}


def _state(options: _Options) -> _State:
    """Config, registry, decider and hooks, built once per process (ConfigError: invalid)."""
    state = _STATES.get(options)
    if state is not None:
        return state
    from toolrun.config import load_config
    from toolrun.execution.decide import EngineDecider
    from toolrun.permissions import PermissionEngine
    from toolrun.tools import default_registry

    config = load_config(
        workspace=Path(options.workspace),
        config_file=Path(options.config_file) if options.config_file else None,
        settings_files=[Path(f) for f in options.settings_files],
        mode=options.mode,
        enforce=options.enforce,
        strict=options.strict,
        managed_settings=Path(options.managed_settings) if options.managed_settings else None,
    )
    registry = default_registry()
    if config.mcp_servers:
        from toolrun.tools.mcp import register_mcp_tools

        register_mcp_tools(config, registry)  # listed, never run: check executes nothing
    hooks = None
    if options.hooks and config.hooks:
        from toolrun.hooks import HookRunner

        hooks = HookRunner(config, run_id=options.run_id, registry=registry)
    # the check remembers its decisions itself (nothing runs: no read can change)
    decider = _CheckDecider(EngineDecider(PermissionEngine(config, registry, memo=False)))
    decider.marks = options.marks
    state = _State(config, registry, decider, hooks)
    _STATES.clear()  # one configuration at a time
    _STATES[options] = state
    return state


class _CheckDecider:
    """The executor's decider, memoised for the length of a check, noting each reason.

    Nothing runs during a check, so the same call in the same directory gets the same
    answer from the permission engine: it is asked once. Calls with a hook decision are
    always decided afresh (hooks see every call; they run before this, in the executor).

    What a decision read from the disk is kept with it, so that an allow an earlier call
    of the plan may change is marked (``toolrun.execution.depends``): exec decides each
    call after the earlier ones ran.
    """

    MAX_CACHED = 1 << 16
    # The cache starts this small and grows to MAX_CACHED only while it pays: a plan of
    # distinct calls would otherwise hold 65,536 decisions it never reuses (~30 MB).
    MIN_CACHED = 1 << 12

    def __init__(self, inner: EngineDecider) -> None:
        from toolrun.execution.depends import PlanDependencies

        self.inner = inner
        self.cache: dict[tuple[str, Path, str], tuple[CallDecision, Footprint]] = {}
        self.limit = self.MIN_CACHED
        self.hits = 0
        self.reasons: dict[int, str] = {}
        self.cwds: Mapping[int, Path] = {}  # the plan being decided: each call's own cwd
        self.plan = PlanDependencies(inner.engine)
        # a split plan: (reads of an unmarked allow, writes, follows a cd) by call index,
        # for the marks that cross parts (``split_check.joined``); None: not kept
        self.deps: dict[int, Deps] | None = None
        self.anything = False
        self.marks = True
        self.first_part: bool | None = None
        # decisions made as the calls were grouped into runs, by call index, until decided
        self.ahead: dict[int, tuple[Call, Path, tuple[CallDecision, Footprint]]] = {}

    def begin(self, *, keep_deps: bool) -> None:
        """A plan (or a part of one) starts: no call of it has been decided yet.

        The part of a split plan that holds the first turn (seen at its first call) has no
        call before it: it marks its own calls as one process would and keeps only their
        writes, for the parts after it (keeping every allow's reads cost 50 MB a part on a
        plan of 100,000 distinct calls)."""
        self.plan.reset()
        self.deps = {} if keep_deps else None
        self.first_part = None
        self.anything = False  # (a part of a split plan) a call that may write anything
        self.ahead.clear()

    def decide(self, call: Call, cwd: Path, hooks: PreToolUseResult | None = None) -> CallDecision:
        from toolrun.execution.depends import recorded

        own = self.cwds.get(call.index)
        if own is not None:
            cwd = own
        if hooks is not None and hooks.decision is not None:
            decision, footprint = recorded(self.inner.decide, call, cwd, hooks)
        else:
            ahead = self.ahead.pop(call.index, None)
            if ahead is not None and ahead[0] is call and ahead[1] == cwd:
                decision, footprint = ahead[2]  # made when the call was grouped into a run
            else:
                decision, footprint = self._decided(call, cwd)
        if not self.marks:
            pass
        elif self.deps is None:
            decision = self.plan.after(call, cwd, decision, footprint,
                                       cwd_recorded=own is not None)  # fmt: skip
        elif self.first_part or (self.first_part is None and self._starts_plan(call)):
            original = decision
            decision = self.plan.after(call, cwd, decision, footprint,
                                       cwd_recorded=own is not None)  # fmt: skip
            if not self.anything and original.decision != "deny":
                writes = footprint.writes(self.plan.engine, call, str(cwd), original)
                if writes:
                    self.deps[call.index] = (None, writes, False)
                    self.anything = writes.anything
        else:  # a later part of a split plan: marked once the parts are joined, in order
            self._keep(self.deps, call, cwd, decision, footprint, own is not None)
        self.reasons[call.index] = decision.reason
        return decision

    def _decided(self, call: Call, cwd: Path) -> tuple[CallDecision, Footprint]:
        from toolrun.execution.depends import recorded

        key = (call.tool, cwd, _input_key(call.input))
        found = self.cache.get(key)
        if found is None:
            found = recorded(self.inner.decide, call, cwd, None)
            if len(self.cache) >= self.limit:
                # at least one hit for every 8 decisions kept: worth a big cache
                useful = self.hits * 8 >= len(self.cache)
                self.limit = self.MAX_CACHED if useful else self.MIN_CACHED
                self.cache.clear()
                self.hits = 0
            self.cache[key] = found
        else:
            self.hits += 1
        return found

    def read_only(self, call: Call, cwd: Path, workspace: Path) -> bool | None:
        """Whether a Bash call is read-only, for its grouping into runs: read from its
        decision, made now and kept for :meth:`decide` (one analysis per command: the
        decision's). None when that decision's analysis answers another question (the
        call has a directory of its own, the boundary has additionalDirectories)."""
        from toolrun.permissions.readonly import read_only_answer

        own = self.cwds.get(call.index, cwd)
        found = self._decided(call, own)
        self.ahead[call.index] = (call, own, found)
        return read_only_answer(found[0].analysis, str(call.input.get("command")), cwd,
                                workspace)  # fmt: skip

    def _starts_plan(self, call: Call) -> bool:
        self.first_part = call.turn == 0
        return self.first_part

    def _keep(
        self, deps: dict[int, Deps], call: Call, cwd: Path, decision: CallDecision,
        footprint: Footprint, cwd_recorded: bool,
    ) -> None:  # fmt: skip
        """What the marks of a split plan need of this call: its reads if it is an allow,
        its writes if it may write."""
        from toolrun.execution.depends import SOME_READS

        engine, here = self.plan.engine, str(cwd)
        reads: Reads | None = None
        writes: Writes | None = None
        if self.anything:
            # after a call of this part that may write anything, only whether a call read
            # something counts (the marks name the first such call of the plan)
            if decision.decision == "allow" and footprint.reads_anything(call, here, decision):
                reads = SOME_READS
        else:
            if decision.decision == "allow":
                reads = footprint.reads(engine, call, here, decision)
                if reads.empty:
                    reads = None
            writes = footprint.writes(engine, call, here, decision) or None
            self.anything = writes is not None and writes.anything
        if reads is not None or writes is not None:
            deps[call.index] = (reads, writes, call.tool == "Bash" and not cwd_recorded)


def _input_key(value: Mapping[str, Any]) -> str:
    # inputs come from JSON or YAML, whose values' reprs differ whenever the values do
    # (a key order that differs only costs a second decision)
    return repr(value)


def check_input(options: _Options, shown: str, path: str | None) -> dict[str, Any]:
    """Load and decide one input; plain data back (the worker-process entry point)."""
    return _check(options, shown, None if path is None else Path(path)).to_json()


@contextlib.contextmanager
def _batch_gc() -> Iterator[None]:
    """No cyclic garbage collection while one input is loaded and decided.

    A big plan is a few hundred thousand objects that all stay alive until the input is
    done; each collection would walk all of them again for nothing (it was 40% of the time
    of a 100,000-call check). Checking makes little cyclic garbage, collected afterwards.

    What survives the input (its report, the memos) is long-lived: it is moved to the
    oldest generation as it is (freeze, unfreeze) rather than walked by the first young
    collection after, which took half a second after 100,000 calls.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


def _check(options: _Options, shown: str, path: Path | None) -> PlanCheck:
    with _batch_gc():
        try:
            return _check_input(options, shown, path)
        except Exception as exc:  # noqa: BLE001 - one input must not end the check of the others
            return _unchecked(shown, exc)


def _unchecked(shown: str, exc: BaseException) -> PlanCheck:
    """An input that toolrun failed on: reported as invalid (exit 3), never as decided."""
    message = f"{shown}: could not be checked ({type(exc).__name__}: {exc}); please report it"
    return PlanCheck(shown, problems=(Problem(None, "", message),))


def _check_input(options: _Options, shown: str, path: Path | None) -> PlanCheck:
    started = time.perf_counter()
    if path is None:
        message = f"{shown}: no file matches this pattern"
        return PlanCheck(shown, problems=(Problem(None, "", message),))
    state = _state(options)
    children: list[tuple[int, int]] = []  # the part processes: (pid, read end)
    try:
        part = _fork_early(options, state, shown, path, children)
        return _check_loaded(options, state, shown, path, started, part, children)
    finally:
        _end_parts(children)


def _load(
    options: _Options, state: _State, shown: str, path: Path, select: _Part | None = None
) -> Imported:
    from toolrun.plan.importers import load_input

    return load_input(
        path,
        state.registry,
        display=shown,
        source_format=options.source_format,
        max_calls_per_turn=state.config.toolrun.max_calls_per_turn,
        strict=options.strict,
        select=select,
        allow_empty=options.allow_empty,
    )


def _check_loaded(
    options: _Options,
    state: _State,
    shown: str,
    path: Path,
    started: float,
    part: _Part | None,
    children: list[tuple[int, int]],
) -> PlanCheck:
    try:
        imported = _load(options, state, shown, path, part)
    except PlanError as exc:
        problems = exc.problems
        if part is not None and not part.validate:  # its own part's: the whole plan's now
            problems = _plan_problems(options, state, shown, path, children)
            if not problems:  # a YAML part unlike its outline (REGION_UNSURE): one process
                return _check_loaded(options, state, shown, path, started, None, children)
        return PlanCheck(shown, problems=problems, wall_ms=(time.perf_counter() - started) * 1000)
    if part is not None and part.spans is None:
        _end_parts(children)  # not a toolrun plan: its parts were never chosen
        part = None
    from toolrun.plan.recorded import rebase_plan

    rebased = rebase_plan(imported, str(state.config.workspace), options.transcript_cwd)
    fmt, warnings, marks = imported.format, imported.warnings, imported.marks
    name, file, changes = rebased.plan.name, rebased.plan.file, rebased.changes
    turns: list[Turn | None] = list(rebased.plan.turns)
    state.decider.cwds = rebased.cwds
    # from here on ``turns`` holds the only reference to the calls: each turn is let go
    # once decided (the calls and their validated inputs are most of a big plan's memory)
    del imported, rebased
    try:
        # (--jobs N splits what was loaded whole; automatic splits only before loading)
        parts = _parts(options.split, turns) if state.hooks is None and options.split else 1
        if part is not None:
            decide = partial(_decide, state, options.run_id, file, rebased=changes, marks=marks)
            try:
                runs, calls = _decided_parts(
                    options, state, shown, path, part, children, decide, turns
                )
            except _PartInvalid:
                problems = _plan_problems(options, state, shown, path, children)
                if not problems:  # a YAML part unlike its outline (REGION_UNSURE): one process
                    return _check_loaded(options, state, shown, path, started, None, children)
                return PlanCheck(
                    shown, problems=problems, wall_ms=(time.perf_counter() - started) * 1000
                )
        elif parts > 1:
            from toolrun.commands.split_check import decide_in_parts

            runs, calls = decide_in_parts(
                partial(_decide, state, options.run_id, file, rebased=changes, marks=marks),
                turns,
                parts,
            )
        else:
            runs, calls = _decide(state, options.run_id, file, turns, changes, marks)
    finally:
        state.decider.cwds = {}
    return PlanCheck(
        file=shown,
        format=fmt,
        name=name,
        turns=len(turns),
        runs=runs,
        calls=calls,
        wall_ms=(time.perf_counter() - started) * 1000,
        warnings=warnings,
    )


async def _released(turns: list[Turn | None]) -> AsyncIterator[tuple[Turn, Sequence[Result]]]:
    """Each turn in order, dropped from ``turns`` as it is handed out."""
    for i, turn in enumerate(turns):
        turns[i] = None
        if turn is not None:
            yield turn, ()


#: an input of this many calls is split between processes when --jobs is automatic
SPLIT_MIN_CALLS = 20_000
#: a file this big may hold that many calls: its part processes are forked before it is
#: loaded (fewer bytes than this a call are rare; a plan that has them is split once loaded)
EARLY_MIN_BYTES = 1 << 20


def _parts(split: int, turns: Sequence[Turn | None]) -> int:
    """How many processes decide the input: ``split`` (0: automatic), at most one per turn."""
    return _size_parts(split, [len(t.calls) if t is not None else 0 for t in turns])


def _size_parts(split: int, sizes: Sequence[int]) -> int:
    """``_parts`` of turns of ``sizes`` calls each."""
    if split == 0:
        split = 2 if sum(sizes) >= SPLIT_MIN_CALLS and _cores() >= 2 else 1
    return max(1, min(split, len(sizes)))


class _Part:
    """The turns one process builds and decides when a plan is split before it is loaded:
    part ``index`` of the parts its calls make (``select`` for the plan loader). Every
    process loads the file and works the same parts out, from each turn's number of calls.
    """

    def __init__(self, index: int, split: int, *, validate: bool) -> None:
        self.index = index
        self.split = split
        self.validate = validate  # the process that reports the plan's problems
        self.spans: list[tuple[int, int]] | None = None  # None: never asked (not a plan)
        self.starts: list[int] = []

    def __call__(self, sizes: Sequence[int]) -> tuple[range, bool]:
        from toolrun.commands.split_check import size_ranges

        self.spans = size_ranges(sizes, _size_parts(self.split, sizes))
        self.starts = _starts_of(sizes)
        mine = self.spans[self.index] if self.index < len(self.spans) else (0, 0)
        return range(*mine), self.validate


def _fork_early(
    options: _Options, state: _State, shown: str, path: Path, children: list[tuple[int, int]]
) -> _Part | None:
    """The processes deciding parts 1, 2, ... of a big plan (into ``children``), forked
    before it is loaded so that each holds only its own part (forked after, each held the
    whole plan: twice the memory); this process's part, or None when it is not split so."""
    parts = options.split
    if parts == 0:
        # automatic: only a JSON plan, which each process decodes turn by turn, or a YAML
        # one, of which each parses only its own turns (``plan_from_region``); a
        # transcript is decoded whole by every process: not worth the memory
        try:
            suffix = path.suffix.lower()
            big = path.stat().st_size >= EARLY_MIN_BYTES and suffix in (".json", ".yaml", ".yml")
        except OSError:
            return None
        parts = 2 if big and _cores() >= 2 else 1
    if parts <= 1 or state.hooks is not None or options.source_format not in (None, "toolrun"):
        return None
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return None  # a call stream or session log: split once loaded, if at all
    from toolrun.commands.split_check import fork_part

    _import_for_parts()
    for index in range(1, parts):
        work = partial(_decide_part, options, state, shown, path, index)
        fork_part(work, lambda pid, fd: children.append((pid, fd)))
    # each process validates only the turns it builds: a problem found in any part (or an
    # id used in two parts) has this process validate the whole plan (``_plan_problems``)
    return _Part(0, options.split, validate=False)


class _PartInvalid(Exception):
    """A part of a split plan has a problem (or shares an id with another part): the
    whole plan is validated for the report of all its problems."""


def _plan_problems(
    options: _Options, state: _State, shown: str, path: Path, children: list[tuple[int, int]]
) -> tuple[Problem, ...]:
    """Every problem of the whole plan, in order, as one process validating it reports
    them (none: it is valid); its part processes, which decide nothing now, are ended."""
    _end_parts(children)
    try:
        _load(options, state, shown, path, _Part(0, options.split, validate=True))
    except PlanError as exc:
        return tuple(exc.problems)
    return ()


def _import_for_parts() -> None:
    """What loading and deciding import, imported once before the parts are forked rather
    than by each of them. (It also keeps Ctrl-C out of imports, which create dataclasses
    with exec: one interrupted there ends Python by SIGINT even once it is handled.)"""
    import anyio._backends._asyncio  # noqa: F401 - what anyio.run imports

    import toolrun.execution.executor
    import toolrun.plan.importers
    import toolrun.plan.recorded  # noqa: F401
    from toolrun.permissions import bash, programs

    bash.analyse("true")  # the parser
    programs.program("true")  # every program's module


def _decide_part(
    options: _Options,
    state: _State,
    shown: str,
    path: Path,
    index: int,
    sink: Sink | None = None,
) -> tuple[tuple[tuple[int, str, int], ...], tuple[CallCheck, ...]] | None:
    """Load the plan, building only the turns of part ``index``, and decide them (in a
    forked process, whose records go to ``sink`` as they are made, or here when that
    process failed); None when there is no such plan."""
    from toolrun.plan.recorded import rebase_plan

    part = _Part(index, options.split, validate=False)
    try:
        imported = _load(options, state, shown, path, part)
    except PlanError:
        return None  # this process reports the plan's problems
    if part.spans is None:
        return None
    rebased = rebase_plan(imported, str(state.config.workspace), options.transcript_cwd)
    turns: list[Turn | None] = list(rebased.plan.turns)
    file, changes, marks = rebased.plan.file, rebased.changes, imported.marks
    state.decider.cwds = rebased.cwds
    del imported, rebased
    try:
        return _decide(
            state, options.run_id, file, turns, changes, marks, turn_starts=part.starts, sink=sink
        )
    finally:
        state.decider.cwds = {}


def _decided_parts(
    options: _Options,
    state: _State,
    shown: str,
    path: Path,
    part: _Part,
    children: list[tuple[int, int]],
    decide: Callable[..., tuple[tuple[tuple[int, str, int], ...], tuple[CallCheck, ...]]],
    turns: list[Turn | None],
) -> tuple[tuple[tuple[int, str, int], ...], tuple[CallCheck, ...]]:
    """This process's part decided here, the others as their processes send them (a part
    whose process failed is loaded and decided here); every record in plan order."""
    from toolrun.commands.split_check import collect_part, joined, runs_in, shifted

    decided = [decide(turns, turn_starts=part.starts)]
    spans = part.spans or []
    for index, (pid, fd) in enumerate(list(children), start=1):
        got = collect_part(pid, fd, runs_in(decided))
        children.remove((pid, fd))  # reaped
        if got is None and index < len(spans):
            # the process failed, or its part is invalid (which deciding it here shows)
            got = _decide_part(options, state, shown, path, index)
            if got is None:
                raise _PartInvalid
            got = shifted(got, runs_in(decided))
        if got is not None:
            decided.append(got)
    runs, calls = joined(decided)
    # ids are unique within each part (its process checked): across parts, checked here
    if len({c.id for c in calls}) != len(calls):
        raise _PartInvalid
    return runs, calls


def _end_parts(children: list[tuple[int, int]]) -> None:
    from toolrun.commands.split_check import end_part

    while children:
        end_part(*children.pop())


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _turn_starts(turns: Sequence[Turn | None]) -> list[int]:
    """Each turn's first call index (an empty turn: the index its first call would have),
    for the 1-based turn of a call by bisection: kept in order, as bisection needs (-1
    for an empty turn put calls before it in the turns after it)."""
    return _starts_of([len(t.calls) if t is not None else 0 for t in turns])


def _starts_of(sizes: Sequence[int]) -> list[int]:
    """``_turn_starts`` of turns of ``sizes`` calls each."""
    starts: list[int] = []
    first = 0
    for size in sizes:
        starts.append(first)
        first += size
    return starts


def _decide(
    state: _State,
    run_id: str,
    file: str,
    turns: list[Turn | None],
    rebased: Mapping[int, tuple[tuple[str, str, str], ...]],
    marks: Mapping[int, str],
    turn_starts: Sequence[int] | None = None,
    sink: Sink | None = None,
) -> tuple[tuple[tuple[int, str, int], ...], tuple[CallCheck, ...]]:
    """Every call of the plan ``file`` through the executor in dry-run mode (as ``exec
    --dry-run`` decides a plan, turn after turn), recorded compactly; ``turns`` is
    emptied as they are decided. ``turns`` may hold only a part of the plan (None in
    place of the others) when ``turn_starts`` is the whole plan's. ``sink``: where the
    records go as they are made, a batch at a time (those left over are returned)."""
    import anyio

    from toolrun.execution.executor import ExecSettings
    from toolrun.permissions.paths import frozen_tree

    config = state.config
    reasons = state.decider.reasons
    batch = 0
    if sink is not None:
        from toolrun.commands.split_check import BATCH as batch
    runs: list[tuple[int, str, int]] = []
    run_of: dict[int, tuple[int, str]] = {}
    calls: list[CallCheck] = []
    # a part of a split plan keeps what the marks across parts need (``joined``)
    decider = state.decider
    decider.begin(keep_deps=turn_starts is not None)
    deps = decider.deps
    if turn_starts is None:
        turn_starts = _turn_starts(turns)

    def on_run(_plan: Plan, run: Run[Call]) -> None:
        runs.append((run.calls[0].turn + 1, run.kind, len(run.calls)))
        for call in run.calls:
            run_of[call.index] = (len(runs), run.kind)

    # one string for each tool name and status, not one a record (the names come from
    # the input, each its own copy; str() of a status makes a new one)
    shared: dict[str, str] = {}

    def on_result(r: Result) -> None:
        run, run_kind = run_of.pop(r.index, (0, ""))
        loc = r.location
        by = r.decided_by
        tool, status = r.tool, r.status
        calls.append(
            CallCheck(
                r.index,
                r.id,
                shared.setdefault(tool, tool),
                r.input,
                r.decision,
                by.kind,
                by.rule,
                by.source,
                reasons.pop(r.index, "") or r.error or "",
                shared.get(status) or shared.setdefault(status, str(status)),
                r.error,
                loc.line if loc else 0,
                loc.column if loc else 0,
                bisect.bisect_right(turn_starts, r.index),
                run,
                run_kind,
                r.execution_id,
                r.hooks,
                rebased.get(r.index, ()),
                marks.get(r.index, ""),
                loc.file if loc and loc.file != file else "",
                deps.pop(r.index, None) if deps else None,
                r.runs_in,
                r.runs_in_why,
            )
        )
        if sink is not None and len(calls) >= batch:
            sink(calls[:])
            calls.clear()

    executor = _recording_executor()(
        workspace=config.workspace,
        registry=state.registry,
        decider=state.decider,
        settings=ExecSettings(
            max_concurrency=config.toolrun.max_concurrency,
            kind_limits=dict(config.toolrun.kind_limits),
            max_calls_per_turn=config.toolrun.max_calls_per_turn,
            dry_run=True,
        ),
        run_id=run_id,
        on_result=on_result,
        additional_directories=config.additional_directories,
        hooks=state.hooks,
        on_run=on_run,
        # (nothing runs: the user's sandbox is where a call would run, and its bubblewrap
        # the one a jail would be made with)
        sandbox=state.decider.inner.engine.sandbox,
    )
    reasons.clear()
    first = next((t.calls[0].index for t in turns if t is not None and t.calls), 0)
    # nothing runs during a check (without hooks): a path found missing stays missing
    frozen = frozen_tree() if state.hooks is None else contextlib.nullcontext()
    with _ctrl_c_raises(), frozen:
        anyio.run(executor.run_stream, file, _released(turns), first)
    return tuple(runs), tuple(calls)


@contextlib.contextmanager
def _ctrl_c_raises() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt where the check is, as in plain Python code.

    Left to itself the event loop's runner only cancels its task on Ctrl-C, and a dry run
    hardly ever waits, so it never saw the cancellation: the check went on to the end and
    exited as if nothing had happened. (A forked part process ignores Ctrl-C: kept so.)
    """
    import signal
    import threading

    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    signal.signal(signal.SIGINT, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _recording_executor() -> type[Executor]:
    from toolrun.execution.executor import Executor

    safe: dict[tuple[str, Path], bool] = {}

    class _Recording(Executor):
        """The executor, less its list of every Result: check records each result compactly
        as it comes (``on_result``) and never reads that list, which for 100,000 calls
        held about 60 MB until the end. Nor does it wait for exec's per-tick delivery
        (``run_stream(keep=False)``): a dry run hardly ever yields to the event loop, so
        results would pile up in the tick's list instead."""

        def _deliver(self, result: Result, acc: list[Result] | None) -> None:
            if self.on_result is not None:
                self.on_result(result)

        def _is_safe(self, call: Call, ctx: ToolContext) -> bool:
            """Whether a Bash command is read-only (concurrency-safe), worked out once per
            command and directory: nothing runs during a check, so even the answers that
            look at files (globs, git), which exec works out afresh, cannot change."""
            if call.tool != "Bash":
                return super()._is_safe(call, ctx)
            if self.hooks is None and isinstance(self.decider, _CheckDecider):
                # (no hook runs before the decision: it can be made now, and its analysis
                # is the only one; with hooks it comes after them, as in exec)
                answer = self.decider.read_only(call, ctx.cwd, ctx.workspace)
                if answer is not None:
                    return answer
            key = (str(call.input.get("command")), ctx.cwd)
            found = safe.get(key)
            if found is None:
                found = safe[key] = super()._is_safe(call, ctx)
                if len(safe) > 1 << 14:
                    safe.clear()
            return found

    return _Recording


def check(
    request: CheckRequest, *, on_plan: Callable[[PlanCheck], None] | None = None
) -> CheckReport:
    """Check every input (ConfigError: nothing can be decided); ``on_plan`` gets each
    input's result in input order, as soon as it and every earlier one are done."""
    from toolrun.execution.journal import new_run_id

    if request.fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {FAIL_ON}, not {request.fail_on!r}")
    started = time.perf_counter()
    options = _Options(
        workspace=str(request.workspace),
        config_file=str(request.config_file) if request.config_file else None,
        settings_files=tuple(str(f) for f in request.settings_files),
        mode=request.mode,
        enforce=request.enforce,
        hooks=request.hooks,
        source_format=request.source_format,
        run_id=new_run_id(),
        transcript_cwd=request.transcript_cwd,
        strict=request.strict,
        managed_settings=str(request.managed_settings) if request.managed_settings else None,
        split=1 if request.jobs is not None and request.jobs <= 1 else request.jobs or 0,
        marks=request.marks,
        allow_empty=request.allow_empty,
    )
    state = _state(options)  # an invalid config stops everything here
    _check_examples(state)
    warnings = state.config.warnings
    inputs = expand_inputs(request.inputs)
    shard = request.shard
    if shard is not None:
        from toolrun.commands.shards import select

        shard, inputs = select([shown for shown, _ in inputs], inputs, shard)
    done: list[PlanCheck] = []
    # several inputs: one process each (--jobs); one input: its turns split (options.split)
    jobs = 1 if request.jobs is None else min(request.jobs, len(inputs))

    def deliver(plan: PlanCheck) -> None:
        done.append(plan)
        if on_plan is not None:
            on_plan(plan)

    if jobs <= 1:
        for shown, path in inputs:
            deliver(_check(options, shown, path))
    else:
        _check_in_processes(options, inputs, jobs, deliver)
    return CheckReport(
        run_id=options.run_id,
        fail_on=request.fail_on,
        plans=tuple(done),
        wall_ms=(time.perf_counter() - started) * 1000,
        config_warnings=warnings,
        config_files=tuple(display_path(f) for f in state.config.files),
        config_digest=_config_digest(state.config.files) if shard is not None else "",
        shard=shard,
    )


def _config_digest(files: Sequence[Path]) -> str:
    from toolrun.commands.shards import files_digest

    return files_digest([(display_path(f), f) for f in files])


def compare(
    request: CheckRequest,
    *,
    config_file: Path | None = None,
    settings_files: Sequence[Path] | None = None,
    on_plan: Callable[[PlanCheck], None] | None = None,
) -> PolicyDiff:
    """Decide every call under the request's config and under the new one (``config_file``
    instead of the toolrun.yaml, ``settings_files`` instead of the --settings files); the
    calls whose decision changes. ``request.fail_on``: ``loosen`` or ``never``."""
    from toolrun.policy.diff import diff_reports

    if request.fail_on not in ("loosen", "never"):
        raise ValueError(f"a policy diff fails on loosen or never, not {request.fail_on!r}")
    base = check(replace(request, fail_on="never", marks=False), on_plan=on_plan)
    new = check(
        replace(
            request,
            fail_on="never",
            marks=False,
            config_file=config_file if config_file is not None else request.config_file,
            settings_files=settings_files if settings_files else request.settings_files,
        )
    )
    return diff_reports(
        base,
        new,
        base_label=", ".join(base.config_files) or "no config",
        new_label=", ".join(new.config_files) or "no config",
        fail_on=request.fail_on,
    )


def _check_examples(state: _State) -> None:
    """The config's rule self-tests: a failing one is an invalid config (exit 3)."""
    from toolrun.errors import ConfigError
    from toolrun.policy.examples import check_examples

    failed = check_examples(state.config, state.registry)
    if failed:
        raise ConfigError(failed)


def _check_in_processes(
    options: _Options,
    inputs: Sequence[tuple[str, Path | None]],
    jobs: int,
    deliver: Callable[[PlanCheck], None],
) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    options = replace(options, split=1)  # a process per input: none splits its input
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = [
            pool.submit(check_input, options, shown, str(path) if path is not None else None)
            for shown, path in inputs
        ]
        for (shown, _), future in zip(inputs, futures, strict=True):
            # input order, each as soon as the earlier ones are in
            try:
                plan = PlanCheck.from_json(future.result())
            except Exception as exc:  # noqa: BLE001 - a worker that died: that input only
                plan = _unchecked(shown, exc)
            deliver(plan)
