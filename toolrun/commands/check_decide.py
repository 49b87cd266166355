"""How ``toolrun check`` decides one plan: the executor in dry-run mode, recorded compactly.

Each process builds its config, registry, decider and hooks once (:func:`state_of`); the
decider memoises the permission engine's answers for the length of the check (nothing
runs, so a call in a directory gets the same answer every time) and marks an allow an
earlier call of the plan may change. :func:`decide_plan` runs the plan's turns through
the executor (the one decision path ``exec`` uses) and keeps a :class:`CallCheck` per call.
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.commands.split_check import starts_of_turns
from toolrun.reaper import raise_now
from toolrun.report.models import CallCheck, Deps

if TYPE_CHECKING:
    from toolrun.commands.split_check import Sink
    from toolrun.config.models import Config
    from toolrun.execution.decide import EngineDecider
    from toolrun.execution.depends import Footprint, Reads, Writes
    from toolrun.execution.executor import Executor
    from toolrun.execution.partition import Run
    from toolrun.execution.results import CallDecision, DecidedBy, Result
    from toolrun.hooks import HookRunner, PreToolUseResult
    from toolrun.plan.models import Call, Plan, Turn
    from toolrun.tools.base import ToolContext
    from toolrun.tools.registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class CheckOptions:
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
class CheckState:
    config: Config
    registry: ToolRegistry
    decider: CheckDecider
    hooks: HookRunner | None


_STATES: dict[CheckOptions, CheckState] = {}


def state_of(options: CheckOptions) -> CheckState:
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
    decider = CheckDecider(EngineDecider(PermissionEngine(config, registry, memo=False)))
    decider.marks = options.marks
    state = CheckState(config, registry, decider, hooks)
    _STATES.clear()  # one configuration at a time
    _STATES[options] = state
    return state


class CheckDecider:
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
        self.cache: dict[tuple[str, Path, object], tuple[CallDecision, Footprint]] = {}
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
        call before it: it marks its own calls as one process would, and the writers it
        leaves (``plan.writers``) are where the marks of the parts after it start. A later
        part keeps what they need of each call (``deps``: keeping every allow's reads cost
        50 MB a part on a plan of 100,000 distinct calls)."""
        self.plan.reset()
        self.deps = {} if keep_deps else None
        self.first_part = None
        self.anything = False  # (a later part of a split plan) a call that may write anything
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
        elif (
            self.deps is None
            or self.first_part
            or (self.first_part is None and self._starts_plan(call))
        ):
            decision = self.plan.after(call, cwd, decision, footprint,
                                       cwd_recorded=own is not None)  # fmt: skip
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


def _input_key(value: Mapping[str, Any]) -> str | tuple[tuple[str, Any], ...]:
    """The memo's key of an input: equal exactly when the inputs are (a key order that
    differs only costs a second decision).

    An input of strings only (most calls) is its items: equal items are equal strings,
    and a tuple of them costs half a repr. Any other value takes its repr (inputs come
    from JSON or YAML, whose values' reprs differ whenever the values do; 1, 1.0 and
    True are equal as items but not as reprs). A repr never equals a tuple."""
    items = tuple(value.items())
    for k, v in items:
        if type(v) is not str or type(k) is not str:
            return repr(value)
    return items


async def _released(turns: list[Turn | None]) -> AsyncIterator[tuple[Turn, Sequence[Result]]]:
    """Each turn in order, dropped from ``turns`` as it is handed out."""
    for i, turn in enumerate(turns):
        turns[i] = None
        if turn is not None:
            yield turn, ()


def decide_plan(
    state: CheckState,
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
        turn_starts = starts_of_turns(turns)

    def on_run(_plan: Plan, run: Run[Call]) -> None:
        runs.append((run.calls[0].turn + 1, run.kind, len(run.calls)))
        for call in run.calls:
            run_of[call.index] = (len(runs), run.kind)

    # one string for each tool name and status, not one a record (the names come from
    # the input, each its own copy; str() of a status makes a new one)
    shared: dict[str, str] = {}

    def record(
        call: Call | Result, decision: str, by: DecidedBy, status: str, error: str | None,
        execution_id: str, hooks: tuple[Mapping[str, Any], ...], runs_in: str | None,
        runs_in_why: str | None,
    ) -> None:  # fmt: skip
        index = call.index
        run, run_kind = run_of.pop(index, (0, ""))
        loc = call.location
        tool = call.tool
        calls.append(
            CallCheck(
                index,
                call.id,
                shared.setdefault(tool, tool),
                call.input,
                decision,
                by.kind,
                by.rule,
                by.source,
                reasons.pop(index, "") or error or "",
                shared.get(status) or shared.setdefault(status, str(status)),
                error,
                loc.line if loc else 0,
                loc.column if loc else 0,
                bisect.bisect_right(turn_starts, index),
                run,
                run_kind,
                execution_id,
                hooks,
                rebased.get(index, ()),
                marks.get(index, ""),
                loc.file if loc and loc.file != file else "",
                deps.pop(index, None) if deps else None,
                runs_in,
                runs_in_why,
            )
        )
        if sink is not None and len(calls) >= batch:
            sink(calls[:])
            calls.clear()

    def on_result(r: Result) -> None:
        record(r, r.decision, r.decided_by, r.status, r.error, r.execution_id, r.hooks,
               r.runs_in, r.runs_in_why)  # fmt: skip

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
    with interrupts_raise(), frozen:
        if state.hooks is None:  # nothing to wait for: no event loop
            _decide_directly(executor, file, turns, record)
        else:
            anyio.run(executor.run_stream, file, _released(turns), first)
    return tuple(runs), tuple(calls)


@contextlib.contextmanager
def interrupts_raise() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt where the check is, as in plain Python code; so do
    SIGTERM (a CI job cancelled, ``timeout``) and SIGHUP (the terminal closed; unless
    ignored, as under ``nohup``), as they interrupt exec: the check stops saying so,
    exits 130 (129), and ends the processes it forked.

    Left to itself the event loop's runner only cancels its task on Ctrl-C, and a dry run
    hardly ever waits, so it never saw the cancellation: the check went on to the end and
    exited as if nothing had happened. SIGTERM killed it outright, leaving its forked
    parts running. (A forked part process ignores all three: kept so.)
    """
    import signal
    import threading

    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    taken = [signal.SIGINT] + [
        number
        for number in (signal.SIGTERM, signal.SIGHUP)
        if signal.getsignal(number) is signal.SIG_DFL
    ]
    for number in taken:
        signal.signal(number, _interrupt)
    try:
        yield
    finally:
        for number in taken:
            signal.signal(number, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _interrupt(signum: int, frame: object) -> None:
    import signal

    from toolrun.errors import Hangup

    raise_now(Hangup() if signum == signal.SIGHUP else KeyboardInterrupt())


def _decide_directly(
    executor: Executor, file: str, turns: list[Turn | None], record: Record
) -> None:
    """``run_stream``'s dry run of ``turns`` where no hook runs, without the event loop
    (which it never waits for then) and without a Result a call: each turn's calls
    admitted (its limit), refused (an input its tool refused), grouped into runs
    (``on_run``) and decided, by the executor's own steps, as ``_run_turn_calls`` and
    ``_run_one_run`` take them; ``record`` gets each call's result in plan order.
    ``turns`` is emptied as they are decided. (tests/check/test_check_decide.py holds it
    to ``run_stream``'s records.)"""
    from functools import partial

    from toolrun.execution.executor import new_execution_id
    from toolrun.execution.partition import partition
    from toolrun.execution.results import Status
    from toolrun.execution.scheduling import TURN_LIMIT, refused, turn_limit_error
    from toolrun.plan.models import InvalidInput, Plan

    on_run = executor._on_run
    assert executor.hooks is None and executor.settings.dry_run and on_run is not None
    plan = Plan(file, None, ())
    limit = executor.settings.max_calls_per_turn
    cwd = executor.workspace  # (a dry run carries no cd; the decider has each call's own)
    is_safe = partial(executor._is_safe, ctx=executor._context(cwd))
    try:
        for i, turn in enumerate(turns):
            turns[i] = None  # let each go once decided
            if turn is None:
                continue
            # (call, decision, status, error) of the turn's calls
            done: list[tuple[Call, CallDecision, str, str | None]] = []
            admitted: Sequence[Call] = turn.calls[:limit]
            refusing = any(type(c.params) is InvalidInput for c in admitted)
            if refusing:
                kept = []
                for call in admitted:
                    params = call.params
                    if type(params) is InvalidInput:
                        done.append((call, refused(params), Status.ERROR, params.message))
                    else:
                        kept.append(call)
                admitted = kept
            for run in partition(admitted, is_safe, executor._moves_cwd):
                on_run(plan, run)
                for call in run.calls:
                    decision = executor._decide(call, cwd)
                    done.append((call, decision, *executor._dry_outcome(call, decision)))
            done.extend((call, TURN_LIMIT, Status.ERROR, turn_limit_error(limit))
                        for call in turn.calls[limit:])  # fmt: skip
            if refusing:  # (their results came first: each takes its place)
                done.sort(key=lambda item: item[0].index)
            for call, decision, status, error in done:
                where = why = None
                if call.tool == "Bash":
                    _, where, why = executor._dry_place(call, decision, None)
                record(call, decision.decision, decision.decided_by, status, error,
                       new_execution_id(), (), where, why)  # fmt: skip
    finally:
        executor.jails.close()


#: what a check keeps of each call's result: the call (or its result), decision, who
#: decided, status, error, execution id, hook records, where it would run and why
Record = Callable[..., None]


def _recording_executor() -> type[Executor]:
    from toolrun.execution.executor import Executor

    safe: dict[tuple[str, Path], bool] = {}

    class _Recording(Executor):
        """The executor, less its list of every Result: check records each result compactly
        as it comes (``on_result``) and never reads that list, which for 100,000 calls
        held about 60 MB until the end. Nor does it wait for exec's per-tick delivery
        (``run_stream(keep=False)``): a dry run hardly ever yields to the event loop, so
        results would pile up in the tick's list instead."""

        _places_runs = False  # (the records have their runs from ``on_run``)

        def _deliver(self, result: Result, acc: list[Result] | None) -> None:
            if self.on_result is not None:
                self.on_result(result)

        def _is_safe(self, call: Call, ctx: ToolContext) -> bool:
            """Whether a Bash command is read-only (concurrency-safe), worked out once per
            command and directory: nothing runs during a check, so even the answers that
            look at files (globs, git), which exec works out afresh, cannot change."""
            if call.tool != "Bash":
                return super()._is_safe(call, ctx)
            if self.hooks is None and isinstance(self.decider, CheckDecider):
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
