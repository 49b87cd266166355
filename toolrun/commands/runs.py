"""Past runs, read back from the journal (``.toolrun/runs/<run-id>.jsonl``)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolrun.errors import UsageError
from toolrun.execution.journal import runs_dir


@dataclass(frozen=True, slots=True)
class RunRecord:
    run_id: str
    path: Path
    started_at: float | None
    plans: tuple[str, ...]
    results: tuple[dict[str, Any], ...]
    wall_ms: float | None  # None: the run never finished (crash or still running)
    interrupted: bool
    events: tuple[dict[str, Any], ...] = field(default=(), repr=False)

    @property
    def counts(self) -> Counter[str]:
        return Counter(str(r.get("status")) for r in self.results)


def read_run(path: Path) -> RunRecord:
    events: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a torn last line after a crash
    start = next((e for e in events if e.get("event") == "run"), {})
    end = next((e for e in events if e.get("event") == "end"), None)
    return RunRecord(
        run_id=path.stem,
        path=path,
        started_at=start.get("started_at"),
        plans=tuple(start.get("plans", ())),
        results=tuple(e for e in events if e.get("event") == "result"),
        wall_ms=end.get("wall_ms") if end else None,
        interrupted=bool(end.get("interrupted")) if end else False,
        events=tuple(events),
    )


def list_runs(workspace: Path) -> list[RunRecord]:
    """Every journalled run of the workspace, newest first."""
    folder = runs_dir(workspace.resolve())
    if not folder.is_dir():
        return []
    return [read_run(p) for p in sorted(folder.glob("*.jsonl"), reverse=True)]


def find_run(workspace: Path, run: str) -> RunRecord:
    """A run by id, unique id prefix, or ``last``."""
    folder = runs_dir(workspace.resolve())
    paths = sorted(folder.glob("*.jsonl"), reverse=True) if folder.is_dir() else []
    if not paths:
        raise UsageError(f"no runs recorded in {folder}")
    if run == "last":
        return read_run(paths[0])
    matches = [p for p in paths if p.stem.startswith(run)]
    if not matches:
        raise UsageError(f"no run {run!r} in {folder} (see `toolrun runs`)")
    if len(matches) > 1 and not any(p.stem == run for p in matches):
        raise UsageError(f"{run!r} matches {len(matches)} runs; give more of the id")
    exact = [p for p in matches if p.stem == run]
    return read_run(exact[0] if exact else matches[0])


def find_call(record: RunRecord, call: str) -> dict[str, Any]:
    """A result of the run by call id, execution id (or a prefix of it) or 1-based number."""
    results = record.results
    for r in results:
        if r.get("id") == call or r.get("execution_id") == call:
            return r
    prefixed = [r for r in results if str(r.get("execution_id", "")).startswith(call)]
    if len(prefixed) == 1:
        return prefixed[0]
    if call.isdigit() and 1 <= int(call) <= len(results):
        return results[int(call) - 1]
    raise UsageError(f"run {record.run_id} has no call {call!r}")
