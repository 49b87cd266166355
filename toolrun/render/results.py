"""Rendering results: streamed text lines, the final table and recap, JSON and JSONL."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolrun.builtin_fields import main_field
from toolrun.execution.results import Result, Status
from toolrun.plan.models import Plan

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


def target_of(tool: str, input: Mapping[str, Any], width: int = 48) -> str:
    key = main_field(tool)
    if tool == "ApplyPatch":  # the patch text itself says nothing in one line
        text = "patch"
    elif key is not None and key in input:
        text = str(input[key])
    else:
        text = json.dumps(dict(input), ensure_ascii=False, separators=(",", ":"), default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


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
    place = result.metadata
    if "run" in place:  # a dry run shows the partition
        where = f"turn {place['turn']} · run {place['run']} {place['run_kind']}"
        return f"{where}; {note}" if note else where
    return note


def _outcome_note(result: Result) -> str:
    if result.status is Status.OK:
        return ""
    if result.status is Status.SKIPPED:
        return "" if result.decision == "allow" else f"would {result.decision}"
    return result.error or ""


def text_line(result: Result, *, show_plan: bool = False) -> str:
    """One streamed line per result: status, call id, the call, time, execution id, note.
    With several plans the call is named ``PLAN:ID``, as `toolrun show` accepts it."""
    name = f"{result.plan}:{result.id}" if show_plan else result.id
    line = f"{result.status:<14} {name}  {result.tool}({target(result)})"
    if result.started_at is not None:
        line += f"  {_ms(result.duration_ms)}"
    line += f"  {result.execution_id}"
    note = _note(result)
    return f"{line}  — {note}" if note else line


def counts(results: Iterable[Result]) -> Counter[Status]:
    return Counter(r.status for r in results)


def recap(results: Sequence[Result], wall_ms: float, *, unread: int = 0) -> str:
    c = counts(results)
    parts = [f"{c[status]} {word}" for status, word in RECAP if c[status]] or ["no calls"]
    took = f"{wall_ms:.0f} ms" if wall_ms < 1000 else f"{wall_ms / 1000:.1f} s"
    lines = "line" if unread == 1 else "lines"
    left = f"; {unread} {lines} of stdin read but never run" if unread else ""
    return " · ".join(parts) + f" in {took}{left}"


HEADERS = ("#", "id", "tool", "target", "decision", "status", "time", "execution", "note")
TARGET_WIDTH = 40


def _row(r: Result, show_plan: bool) -> list[str]:
    row = [
        str(r.index + 1),
        r.id,
        r.tool,
        target(r, TARGET_WIDTH),
        f"{r.decision} ({r.decided_by.kind})",
        str(r.status),
        _ms(r.duration_ms) if r.started_at is not None else "",
        r.execution_id[:13],  # enough to tell calls apart; the journal has the rest
        _note(r)[:80],
    ]
    return [r.plan, *row] if show_plan else row


def table(results: Sequence[Result], *, show_plan: bool = False) -> str:
    """The whole table at once (tabulate), for output that is not a terminal."""
    from toolrun.render.table import render_table

    headers = ["plan", *HEADERS] if show_plan else list(HEADERS)
    return render_table(headers, [_row(r, show_plan) for r in results])


class StreamingTable:
    """The table row by row, as results arrive: columns are sized from the plans up front."""

    def __init__(self, plans: Sequence[Plan]) -> None:
        self.show_plan = len(plans) > 1
        calls = [c for p in plans for c in p.calls]
        # with no plan up front (calls streamed on stdin) the widths are guesses
        fixed = {
            "plan": max((len(p.file) for p in plans), default=4),
            "#": len(str(max((len(p) for p in plans), default=9999))),
            "id": max((len(c.id) for c in calls), default=10),
            "tool": max((len(c.tool) for c in calls), default=10),
            "target": TARGET_WIDTH,
            "decision": len("allow (protected)"),
            "status": len("needs_approval"),
            "time": len("999 ms"),
            "execution": 13,
        }
        names = ["plan", *HEADERS] if self.show_plan else list(HEADERS)
        self.widths = [max(fixed.get(n, 0), len(n)) for n in names[:-1]]
        self.names = names

    def _line(self, cells: Sequence[str]) -> str:
        padded = [c.ljust(w) for c, w in zip(cells, self.widths, strict=False)]
        return "  ".join([*padded, cells[-1]]).rstrip()

    def header(self) -> str:
        rule = ["-" * w for w in self.widths] + ["-" * 4]
        return self._line(self.names) + "\n" + self._line(rule)

    def row(self, result: Result) -> str:
        return self._line(_row(result, self.show_plan))


def summary(results: Sequence[Result], wall_ms: float) -> dict[str, Any]:
    c = counts(results)
    return {**{str(s): c[s] for s in Status}, "total": len(results), "wall_ms": round(wall_ms, 1)}


def json_report(
    run_id: str,
    plans: Sequence[str],
    results: Sequence[Result],
    wall_ms: float,
    extra: Mapping[str, Any] | None = None,
) -> str:
    report = {
        "run_id": run_id,
        "plans": list(plans),
        "results": [r.as_json() for r in results],
        "summary": summary(results, wall_ms),
        **(extra or {}),
    }
    return json.dumps(report, indent=2, ensure_ascii=False)


def jsonl_line(result: Result) -> str:
    return result.json_line()
