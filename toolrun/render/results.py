"""Rendering results: streamed text lines, the final table and recap, JSON and JSONL."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolrun.builtin_fields import target_of
from toolrun.execution.results import Result, Status
from toolrun.plan.models import Plan
from toolrun.render.terminal import Column, Painter, fit, layout, one_line

# the order and words of the recap line
RECAP = (
    (Status.OK, "ok"),
    (Status.ERROR, "failed"),
    (Status.TIMEOUT, "timed out"),
    (Status.DENIED, "denied"),
    (Status.NEEDS_APPROVAL, "need approval"),
    (Status.CANCELLED, "cancelled"),
    (Status.INTERRUPTED, "interrupted"),
    (Status.SKIPPED, "skipped"),
)


def target(result: Result, width: int = 48) -> str:
    """The call's main argument, shortened: the command, the path, the URL, ..."""
    return target_of(result.tool, result.input, width)


def _ms(value: float) -> str:
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"


def hooks_note(result: Mapping[str, Any]) -> str:
    """That hooks ran, in a few words, from a result's JSON (or a journal record):
    ``hooks: PreToolUse rewrote the input (was rm f.txt), PostToolUse``."""
    parts = []
    for record in result.get("hooks") or ():
        if not record.get("runs"):
            continue  # every hook of the event was filtered out by its `if`: none ran
        event = str(record.get("event", "hook"))
        if event == "PreToolUse" and result.get("original_input") is not None:
            was = target_of(str(result.get("tool", "")), result["original_input"], 40)
            event += f" rewrote the input (was {was})"
        parts.append(event)
    return "hooks: " + ", ".join(parts) if parts else ""


def hooks_lines(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per hook process that ran for a call: event, command, source, outcome."""
    lines = []
    for record in records:
        for run in record.get("runs") or ():
            what = str(run.get("outcome", ""))
            if run.get("exit_code") is not None:
                what += f", exit {run['exit_code']}"
            if run.get("decision"):
                what += f", {run['decision']}"
            if run.get("updated_input") is not None:
                what += ", rewrote the input"
            lines.append(
                f"{run.get('event', record.get('event'))} `{run.get('command')}` "
                f"({run.get('source')}): {what}"
            )
    return lines


def _note(result: Result) -> str:
    note = _outcome_note(result)
    if result.hooks:
        ran = hooks_note(
            {
                "tool": result.tool,
                "hooks": result.hooks,
                "original_input": result.original_input,
            }
        )
        note = f"{note}; {ran}" if note else ran
    checked = verify_note(result.verify)
    if checked:
        note = f"{note}; {checked}" if note else checked
    place = result.metadata
    if "run" in place:  # a dry run shows the partition, and where a Bash call would run
        where = f"turn {place['turn']} · run {place['run']} {place['run_kind']}"
        if result.runs_in:
            where += f" · {result.runs_in}"
        return f"{where}; {note}" if note else where
    return note


def verify_note(reports: Iterable[Mapping[str, Any]]) -> str:
    """What autoVerify found, in a few words: ``verify: ruff 2 (a.py:1:8 F401), mypy ok``."""
    parts = []
    for report in reports:
        name, status = report.get("verifier"), report.get("status")
        found = report.get("diagnostics") or ()
        if status == "found" and found:
            first = found[0]
            code = f" {first.get('code')}" if first.get("code") else ""
            where = f"{first.get('file')}:{first.get('line')}:{first.get('column')}{code}"
            parts.append(f"{name} {len(found)} ({where})")
        elif status in ("timeout", "failed"):
            message = str(report.get("message") or "")
            parts.append(f"{name} {status}" + (f": {message[:60]}" if message else ""))
        else:
            parts.append(f"{name} {status}")
    return "verify: " + ", ".join(parts) if parts else ""


def verify_lines(reports: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per diagnostic autoVerify kept: ``ruff a.py:1:8: error F401 message``."""
    lines = []
    for report in reports:
        for d in report.get("diagnostics") or ():
            code = f" {d.get('code')}" if d.get("code") else ""
            lines.append(
                f"{report.get('verifier')} {d.get('file')}:{d.get('line')}:{d.get('column')}: "
                f"{d.get('severity')}{code} {d.get('message')}"
            )
    return lines


def _outcome_note(result: Result) -> str:
    if result.status is Status.OK:
        return ""
    if result.status is Status.SKIPPED:
        return "" if result.decision == "allow" else f"would {result.decision}"
    return result.error or ""


def text_line(result: Result, *, show_plan: bool = False, paint: Painter | None = None) -> str:
    """One streamed line per result: status, call id, the call, time, execution id, note.
    With several plans the call is named ``PLAN:ID``, as `toolrun show` accepts it. A
    multi-line error is escaped (``\\n``): one result is always one line."""
    name = f"{result.plan}:{result.id}" if show_plan else result.id
    status = f"{result.status:<14}"
    if paint is not None:
        status = paint(status, str(result.status))
    line = f"{status} {one_line(name)}  {result.tool}({one_line(target(result))})"
    if result.started_at is not None:
        line += f"  {_ms(result.duration_ms)}"
    line += f"  {result.execution_id}"
    note = one_line(_note(result))
    return f"{line}  — {note}" if note else line


def verbose_lines(result: Result) -> list[str]:
    """``--verbose``: who decided the call and every hook that ran, indented under it."""
    by = result.decided_by
    decided = f"{result.decision} by {by.kind}"
    if by.rule:
        decided += f" {by.rule}" + (f" ({by.source})" if by.source else "")
    lines = [f"decided: {decided}"]
    if result.runs_in:
        lines.append(f"runs in: {result.runs_in} — {result.runs_in_why}")
    lines += [f"hook: {line}" for line in hooks_lines(result.hooks)]
    lines += [f"verify: {line}" for line in verify_lines(result.verify)]
    return ["    " + one_line(line) for line in lines]


def counts(results: Iterable[Result]) -> Counter[Status]:
    return Counter(r.status for r in results)


def recap(
    results: Sequence[Result] | Counter[Status], wall_ms: float, *, unread: int = 0
) -> str:
    """``results``: the results, or their counts by status."""
    c = results if isinstance(results, Counter) else counts(results)
    parts = [f"{c[status]} {word}" for status, word in RECAP if c[status]] or ["no calls"]
    took = f"{wall_ms:.0f} ms" if wall_ms < 1000 else f"{wall_ms / 1000:.1f} s"
    lines = "line" if unread == 1 else "lines"
    left = f"; {unread} {lines} of stdin read but never run" if unread else ""
    return " · ".join(parts) + f" in {took}{left}"


HEADERS = ("#", "id", "tool", "target", "decision", "status", "time", "execution", "note")
TARGET_WIDTH = 40
NOTE_WIDTH = 80


def _cells(r: Result) -> dict[str, str]:
    """A result's table cells, whole (the layout cuts them to fit)."""
    return {
        "plan": r.plan,
        "#": str(r.index + 1),
        "id": r.id,
        "tool": r.tool,
        "target": target(r, 4096),
        "decision": f"{r.decision} ({r.decided_by.kind})",
        "status": str(r.status),
        "time": _ms(r.duration_ms) if r.started_at is not None else "",
        "execution": r.execution_id[:13],  # enough to tell calls apart; the journal has the rest
        "note": _note(r),
    }


def table(results: Sequence[Result], *, show_plan: bool = False) -> str:
    """The whole table at once (tabulate), for output that is not a terminal: targets and
    notes are cut (with …) at set widths."""
    from toolrun.render.table import render_table

    headers = ["plan", *HEADERS] if show_plan else list(HEADERS)
    widths = {"target": TARGET_WIDTH, "note": NOTE_WIDTH}
    rows = [
        [fit(one_line(cells[h]), widths.get(h, 4096)) for h in headers]
        for cells in map(_cells, results)
    ]
    return render_table(headers, rows)


class StreamingTable:
    """The table row by row, as results arrive, sized to the terminal: columns are sized
    from the plans up front; when the terminal is narrow the least useful columns go
    (execution, #, decision, time) and the target and note shrink, cut with ``…``."""

    def __init__(
        self, plans: Sequence[Plan], width: int | None = None, paint: Painter | None = None
    ) -> None:
        self.show_plan = len(plans) > 1
        self.paint = paint
        calls = [c for p in plans for c in p.calls]
        targets = [len(target_of(c.tool, c.input, 4096)) for c in calls]
        # with no plan up front (calls streamed on stdin) the widths are guesses
        columns = [
            Column("plan", max((len(p.file) for p in plans), default=4)),
            Column("#", len(str(max((len(p) for p in plans), default=9999))), drop=4),
            Column("id", max((len(c.id) for c in calls), default=10)),
            Column("tool", max((len(c.tool) for c in calls), default=10)),
            Column("target", max(targets, default=TARGET_WIDTH), flex=True, minimum=12),
            Column("decision", len("allow (protected)"), drop=3),
            Column("status", len("needs_approval")),
            Column("time", len("999 ms"), drop=2),
            Column("execution", 13, drop=5),
            Column("note", 4096, flex=True, minimum=12),
        ]
        if not self.show_plan:
            columns = columns[1:]
        self.layout = layout(columns, width)
        self.cut = len(self.layout.names) < len(columns)

    def header(self) -> str:
        return self.layout.header()

    def row(self, result: Result) -> str:
        whole = _cells(result)
        cells = self.layout.cells(whole)
        names = self.layout.names
        if any(cell != one_line(whole[n]) for n, cell in zip(names, cells, strict=True)):
            self.cut = True
        return self.layout.line(cells, self.paint, str(result.status))


def cut_note(run_id: str | None) -> str:
    """What the table says when it cut something to fit (no run id: no journal)."""
    return f"(cut to fit: toolrun show {run_id} CALL)" if run_id else "(cut to fit: see --format json)"


#: The run's claim of its jails (#25): (enforced, why not), as ``ExecReport`` has them.
Enforcement = tuple[bool | None, str | None]


def summary(
    results: Sequence[Result], wall_ms: float, enforcement: Enforcement = (None, None)
) -> dict[str, Any]:
    """The counts by status, and the run's claim of its jails: ``enforced`` true (every
    call allowed on toolrun's judgement ran in a jail), false (no jail could be made:
    ``enforced_reason``), null (no such call: nothing to claim)."""
    c = counts(results)
    return {
        **{str(s): c[s] for s in Status},
        "total": len(results),
        "enforced": enforcement[0],
        "enforced_reason": enforcement[1],
        "wall_ms": round(wall_ms, 1),
    }


def json_report(
    run_id: str,
    plans: Sequence[str],
    results: Sequence[Result],
    wall_ms: float,
    extra: Mapping[str, Any] | None = None,
    enforcement: Enforcement = (None, None),
) -> str:
    report = {
        "run_id": run_id,
        "plans": list(plans),
        "results": [r.as_json() for r in results],
        "summary": summary(results, wall_ms, enforcement),
        **(extra or {}),
    }
    return json.dumps(report, indent=2, ensure_ascii=False)


def jsonl_line(result: Result) -> str:
    return result.json_line()
