"""Past runs, read back from the journal (``.toolrun/runs/<run-id>.jsonl``).

Journals are streamed a line at a time, never loaded whole: ``runs`` keeps counts,
``show`` hands each result on as it is read, so a journal of any size is read in
memory bounded by its longest line (plus the calls that were running when a run
stopped). A line that is not a record toolrun wrote (not UTF-8, not a JSON
object, a field of the wrong type) is skipped and counted; a last line without
its newline is a *torn* record (toolrun was killed or the disk filled while
writing it). A file that cannot be read at all is one row that says so: it
never hides the other runs.

Lines are read as the journal writes them (:mod:`toolrun.execution.journal`): JSON
nested at most ``MAX_DEPTH`` deep (a deeper line is a bad line, not a crash); a record
stored beside the journal is read back from its file by ``show`` (``runs`` counts it
from its line alone). Lines up to 64 MiB are read: older journals wrote longer lines
than today's ``MAX_LINE_BYTES``.
"""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from toolrun.errors import UsageError
from toolrun.execution.journal import in_use, runs_dir, stored_outputs_dir
from toolrun.execution.journal_read import (
    ReadStats,
    Record,
    first_record,
    last_record,
    read_records,
)


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One journalled run, as `runs` lists it."""

    run_id: str
    path: Path
    started_at: float | None
    plans: tuple[str, ...]
    counts: Mapping[str, int]
    wall_ms: float | None  # None: the run never finished (crash or still running)
    interrupted: bool
    bad_lines: int = 0
    torn: bool = False
    # calls that had started and have no result: running when the run stopped
    running: int = 0
    unread_lines: int = 0
    unreadable: str | None = None  # the file could not be read at all
    crashed: bool = False  # no end record, and no live process writes it

    @property
    def finished(self) -> bool:
        return self.wall_ms is not None

    @property
    def note(self) -> str:
        notes = []
        if self.unreadable:
            notes.append(f"unreadable: {self.unreadable}")
        elif self.interrupted:
            notes.append("interrupted")
        elif self.crashed:
            notes.append("crashed: no end record, its process is gone")
        elif not self.finished:
            notes.append("incomplete")
        if self.running:
            notes.append(f"{self.running} started without a result")
        if self.unread_lines:
            notes.append(f"{self.unread_lines} lines unread")
        if self.torn:
            notes.append("torn last line")
        if self.bad_lines:
            notes.append(f"{self.bad_lines} bad lines skipped")
        return "; ".join(notes)


@dataclass(slots=True)
class _Tally:
    start: Record | None = None
    end: Record | None = None
    counts: Counter[str] = field(default_factory=Counter)
    running: dict[str, Record] = field(default_factory=dict)

    def add(self, record: Record) -> None:
        event = record["event"]
        if event == "result":
            self.counts[record["status"]] += 1
            if "execution_id" in record:
                self.running.pop(record["execution_id"], None)
        elif event == "started":
            self.running[record["execution_id"]] = record
        elif event == "run" and self.start is None:
            self.start = record
        elif event == "end":
            self.end = record


#: A live session's journal (``toolrun hook``: no process holds it between tool calls)
#: with no end record counts as abandoned once it has not changed for this long.
SESSION_IDLE_S = 24 * 3600


def _crashed(path: Path, start: Record, end: Record | None) -> bool:
    """No end record and nobody writes it any more. A run's process holds its journal
    while it runs; a live session's decisions come from short hook processes, so its
    journal is only abandoned after :data:`SESSION_IDLE_S` without a decision."""
    if end is not None:
        return False
    if start.get("source") == "hook":
        try:
            idle = time.time() - path.stat().st_mtime
        except OSError:
            return True
        return idle > SESSION_IDLE_S
    return not in_use(path)


def _summary(path: Path, tally: _Tally, stats: ReadStats) -> RunSummary:
    start, end = tally.start or {}, tally.end
    return RunSummary(
        crashed=_crashed(path, start, end),
        run_id=str(start.get("run_id") or path.stem),
        path=path,
        started_at=start.get("started_at"),
        plans=tuple(start.get("plans", ())),
        counts=dict(tally.counts),
        wall_ms=(end.get("wall_ms") or 0.0) if end is not None else None,
        interrupted=bool(end.get("interrupted")) if end is not None else False,
        bad_lines=stats.bad_lines,
        torn=stats.torn,
        running=len(tally.running),
        unread_lines=int(end.get("unread_lines", 0)) if end is not None else 0,
    )


def summarise(path: Path) -> RunSummary:
    """One pass over a journal, keeping counts only."""
    stats = ReadStats()
    tally = _Tally()
    try:
        for record in read_records(path, stats):
            tally.add(record)
    except OSError as exc:
        return RunSummary(
            run_id=path.stem,
            path=path,
            started_at=None,
            plans=(),
            counts={},
            wall_ms=None,
            interrupted=False,
            unreadable=exc.strerror or str(exc),
        )
    return _summary(path, tally, stats)


def _journals(workspace: Path) -> list[Path]:
    """Journal files, newest run first: by the start time each records (two runs in the
    same second are told apart), then by the file's time for one that records none."""
    folder = runs_dir(workspace.resolve())
    if not folder.is_dir():
        return []

    return sorted(folder.glob("*.jsonl"), key=lambda p: (_started(p), p.name), reverse=True)


def _started(path: Path) -> float:
    """When a run started: its run record's time, else the journal file's (0: unknown)."""
    try:
        record = first_record(path)
        when = record.get("started_at") if record else None
        return float(when) if when is not None else os.stat(path).st_mtime
    except (OSError, ValueError, TypeError):
        return 0.0


def list_runs(workspace: Path, *, limit: int | None = None) -> list[RunSummary]:
    """Every journalled run of the workspace (or the ``limit`` newest), newest first; only
    the journals listed are read."""
    return [summarise(p) for p in _journals(workspace)[:limit]]


@dataclass(frozen=True, slots=True)
class Pruned:
    deleted: tuple[str, ...]  # run ids, newest first
    unfinished: tuple[str, ...]  # old enough to go, but still running: kept
    failed: tuple[tuple[str, str], ...]  # (run id, why) for journals that could not go
    kept: int


def prune_runs(
    workspace: Path,
    *,
    keep: int | None = None,
    older_than_days: float | None = None,
    now: float,
    dry_run: bool = False,
) -> Pruned:
    """Delete the journals (and the stored whole outputs beside them) of all but the
    ``keep`` newest runs, or of the runs that started more than ``older_than_days``
    before ``now``. A run with no end record is kept while its process lives (it is
    running now); one whose process is gone crashed, and goes like any other, with the
    partial outputs (``.out.part``) it left in its folder."""
    paths = _journals(workspace)
    if keep is not None:
        candidates = paths[keep:]
    else:
        cutoff = now - (older_than_days or 0.0) * 86400
        candidates = [p for p in paths if _started(p) < cutoff]
    deleted, unfinished, failed = [], [], []
    for path in candidates:
        summary = summarise(path)
        if not summary.finished and not summary.crashed:
            unfinished.append(path.stem)
            continue
        if not dry_run:
            try:
                _remove_stored(stored_outputs_dir(path))
                path.unlink()
            except OSError as exc:
                failed.append((path.stem, exc.strerror or str(exc)))
                continue
        deleted.append(path.stem)
    return Pruned(tuple(deleted), tuple(unfinished), tuple(failed), len(paths) - len(deleted))


def _remove_stored(folder: Path) -> None:
    """A run's stored whole outputs go before its journal: a failure keeps the journal,
    so the run is still listed (and pruned next time)."""
    if folder.is_symlink():
        folder.unlink()  # never follow a link out of .toolrun/runs/
    elif folder.is_dir():
        shutil.rmtree(folder)


def find_run(workspace: Path, run: str) -> Path:
    """A run's journal by id, unique id prefix, or ``last`` (the latest started)."""
    folder = runs_dir(workspace.resolve())
    paths = _journals(workspace)
    if not paths:
        raise UsageError(f"no runs recorded in {folder}")
    if run == "last":
        return paths[0]
    exact = [p for p in paths if p.stem == run]
    if exact:
        return exact[0]
    matches = [p for p in paths if p.stem.startswith(run)]
    if not matches:
        raise UsageError(f"no run {run!r} in {folder} (see `toolrun runs`)")
    if len(matches) > 1:
        raise UsageError(f"{run!r} matches {len(matches)} runs; give more of the id")
    return matches[0]


@dataclass
class RunReader:
    """One pass over one run's journal for `show`: results come out as they are read;
    what is left over (calls that started and never got a result, the end record, the
    line counts) is there once the pass is done."""

    path: Path
    stats: ReadStats = field(default_factory=ReadStats)
    tally: _Tally = field(default_factory=_Tally)

    def results(self) -> Iterator[Record]:
        for record in read_records(self.path, self.stats, whole=True):
            self.tally.add(record)
            if record["event"] == "result":
                yield record

    @property
    def start(self) -> Record:
        if self.tally.start is None:
            self.tally.start = first_record(self.path)
        return self.tally.start or {}

    @property
    def end(self) -> Record:
        """The run's end record ({} when it did not finish), read from the journal's end."""
        if self.tally.end is None:
            self.tally.end = last_record(self.path)
        return self.tally.end or {}

    @property
    def running(self) -> list[Record]:
        """Calls that had started (and may have had effects) but have no result."""
        return list(self.tally.running.values())

    @property
    def summary(self) -> RunSummary:
        return _summary(self.path, self.tally, self.stats)


def plan_matches(record: Record, plan: str | None) -> bool:
    """Whether a call record is of ``plan``: its path as journalled, its file name, or
    that name without its extension (None: any plan)."""
    if plan is None:
        return True
    name = str(record.get("plan", ""))
    return plan in (name, Path(name).name, Path(name).stem)


def find_call(reader: RunReader, call: str, plan: str | None = None) -> Record:
    """A call of the run by call id, execution id (or a unique prefix of it) or its
    number (the `#` that `show` lists); ``plan`` picks among plans that share ids, and
    so does ``PLAN:CALL`` (how multi-plan output names a call) when no call is named
    ``PLAN:CALL`` itself."""
    found = _find_call(reader, call, plan)
    if found is None and plan is None and ":" in call:
        named, _, call_id = call.rpartition(":")
        if named and call_id:  # an empty part would match every execution id's prefix
            found = _find_call(reader, call_id, named)
    if found is None:
        where = f" in plan {plan!r}" if plan is not None else ""
        raise UsageError(f"run {reader.path.stem} has no call {call!r}{where}")
    return found


def _find_call(reader: RunReader, call: str, plan: str | None) -> Record | None:
    def in_plan(record: Record) -> bool:
        return plan_matches(record, plan)

    exact: list[Record] = []
    prefixed: list[Record] = []
    numbered: list[Record] = []
    for record in reader.results():
        if not in_plan(record):
            continue
        if record.get("execution_id") == call:
            return record
        if record.get("id") == call:
            exact.append(record)
        elif str(record.get("execution_id", "")).startswith(call) and len(prefixed) < 2:
            prefixed.append(record)
        elif call.isdigit() and record["index"] + 1 == int(call):
            numbered.append(record)
    # a call that started and never got a result is found by its id too
    exact.extend(
        {**record, "status": "started"}
        for record in reader.running
        if in_plan(record) and call in (record.get("id"), record.get("execution_id"))
    )
    for found in (exact, prefixed if len(prefixed) == 1 else [], numbered):
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            plans = sorted({str(r.get("plan")) for r in found})
            if len(plans) > 1:
                raise UsageError(
                    f"call {call!r} is in {len(plans)} plans of run {reader.path.stem} "
                    f"({', '.join(plans)}): pick one with PLAN:CALL or --plan"
                )
            return found[0]
    return None
