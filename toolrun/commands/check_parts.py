"""A big plan split before it is loaded: a process per part, each holding only its turns.

Forked before the plan is loaded (forked after, each held the whole plan: twice the
memory), every process loads the file building only its own part's turns (``select``
for the plan loader) and decides them; this one collects the parts in order
(:mod:`toolrun.commands.split_check` sends and joins them). A part with a problem has
this process validate the whole plan, so the report lists what one process would.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from toolrun.commands.check_decide import decide_plan
from toolrun.commands.check_inputs import load_plan
from toolrun.commands.split_check import starts_of
from toolrun.errors import PlanError, Problem
from toolrun.report.models import CallCheck

if TYPE_CHECKING:
    from toolrun.commands.check_decide import CheckOptions, CheckState
    from toolrun.commands.split_check import Sink
    from toolrun.plan.models import Turn


#: an input of this many calls is split between processes when --jobs is automatic
SPLIT_MIN_CALLS = 20_000
#: a file this big may hold that many calls: its part processes are forked before it is
#: loaded (fewer bytes than this a call are rare; a plan that has them is split once loaded)
EARLY_MIN_BYTES = 1 << 20


def plan_parts(split: int, turns: Sequence[Turn | None]) -> int:
    """How many processes decide the input: ``split`` (0: automatic), at most one per turn."""
    return size_parts(split, [len(t.calls) if t is not None else 0 for t in turns])


def size_parts(split: int, sizes: Sequence[int]) -> int:
    """``plan_parts`` of turns of ``sizes`` calls each."""
    if split == 0:
        split = 2 if sum(sizes) >= SPLIT_MIN_CALLS and cores() >= 2 else 1
    return max(1, min(split, len(sizes)))


class Part:
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

        self.spans = size_ranges(sizes, size_parts(self.split, sizes))
        self.starts = starts_of(sizes)
        mine = self.spans[self.index] if self.index < len(self.spans) else (0, 0)
        return range(*mine), self.validate


def fork_early(
    options: CheckOptions, state: CheckState, shown: str, path: Path, children: list[tuple[int, int]]
) -> Part | None:
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
        parts = 2 if big and cores() >= 2 else 1
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
    # id used in two parts) has this process validate the whole plan (``plan_problems``)
    return Part(0, options.split, validate=False)


class PartInvalid(Exception):
    """A part of a split plan has a problem (or shares an id with another part): the
    whole plan is validated for the report of all its problems."""


def plan_problems(
    options: CheckOptions, state: CheckState, shown: str, path: Path, children: list[tuple[int, int]]
) -> tuple[Problem, ...]:
    """Every problem of the whole plan, in order, as one process validating it reports
    them (none: it is valid); its part processes, which decide nothing now, are ended."""
    end_parts(children)
    try:
        load_plan(options, state, shown, path, Part(0, options.split, validate=True))
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
    options: CheckOptions,
    state: CheckState,
    shown: str,
    path: Path,
    index: int,
    sink: Sink | None = None,
) -> tuple[tuple[tuple[int, str, int], ...], tuple[CallCheck, ...]] | None:
    """Load the plan, building only the turns of part ``index``, and decide them (in a
    forked process, whose records go to ``sink`` as they are made, or here when that
    process failed); None when there is no such plan."""
    from toolrun.plan.recorded import rebase_plan

    part = Part(index, options.split, validate=False)
    try:
        imported = load_plan(options, state, shown, path, part)
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
        return decide_plan(
            state, options.run_id, file, turns, changes, marks, turn_starts=part.starts, sink=sink
        )
    finally:
        state.decider.cwds = {}


def decided_parts(
    options: CheckOptions,
    state: CheckState,
    shown: str,
    path: Path,
    part: Part,
    children: list[tuple[int, int]],
    decide: Callable[..., tuple[tuple[tuple[int, str, int], ...], tuple[CallCheck, ...]]],
    turns: list[Turn | None],
) -> tuple[tuple[tuple[int, str, int], ...], tuple[CallCheck, ...]]:
    """This process's part decided here, the others as their processes send them (a part
    whose process failed is loaded and decided here); every record in plan order."""
    from toolrun.commands.split_check import Joiner, shifted

    first = decide(turns, turn_starts=part.starts)
    joiner = Joiner(state.decider.plan.writers)
    joiner.add(first)
    spans = part.spans or []
    for index, (pid, fd) in enumerate(list(children), start=1):
        whole = joiner.collect(pid, fd)
        children.remove((pid, fd))  # reaped
        if not whole and index < len(spans):
            # the process failed, or its part is invalid (which deciding it here shows)
            got = _decide_part(options, state, shown, path, index)
            if got is None:
                raise PartInvalid
            joiner.add(shifted(got, joiner.shift))
    runs, calls = joiner.joined()
    # ids are unique within each part (its process checked): across parts, checked here
    if len({c.id for c in calls}) != len(calls):
        raise PartInvalid
    return runs, calls


def end_parts(children: list[tuple[int, int]]) -> None:
    from toolrun.commands.split_check import end_part

    while children:
        end_part(*children.pop())


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1

