"""Rendering results: streamed text lines, the final table and recap, JSON and JSONL."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolrun.builtin_fields import Workspace, target_of
from toolrun.execution.results import Result, Status
from toolrun.plan.models import Plan
from toolrun.render.layout import Column, Grid, glued, grid
from toolrun.render.terminal import Painter, fit, one_line

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


# how each kind of decider is named in a table's "decided by" cell
_DECIDERS = {
    "readonly": "read-only",
    "boundary": "workspace boundary",
    "protected": "protected path",
    "default": "no rule",
    "flag": "--ask allow",
    "invalid": "invalid input",
    "admission": "turn limit",
    "input": "input check",
    "interrupt": "interrupted",
    "depends": "an earlier call",
}


def decider(kind: str, rule: str | None, source: str | None, mode: str | None = None) -> str:
    """Who decided, for a table: ``rule Bash(curl *) (toolrun.yaml:4)``, ``mode
    acceptEdits``, ``hook `./check.sh` (toolrun.yaml:9)``, ``person (yes)``. The rule's
    text is one unit: wrapping never splits it when its column can hold it."""
    if kind == "rule" and rule:
        text = glued(f"rule {rule}")
    elif kind == "hook":
        text = glued(f"hook `{rule}`") if rule else "hook"
    elif kind == "user":
        text = f"person ({rule})" if rule else "person"
    elif kind == "mode":
        text = f"mode {mode}" if mode else "mode"
    elif kind == "sandbox":
        text = rule or "sandbox"
    else:
        text = _DECIDERS.get(kind, kind)
    return f"{text} ({source})" if source else text


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
    from toolrun.hooks.messages import messages_note  # (#30: what hooks said, in short)

    said = messages_note(result.get("hooks") or ())  # first: a table cuts the note's end
    ran = "hooks: " + ", ".join(parts) if parts else ""
    return "; ".join(n for n in (said, ran) if n)


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
    from toolrun.hooks.messages import messages_lines  # (#30: what hooks said, in full)

    return lines + messages_lines(records)


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
        if ran:  # ("" when every hook of the event was filtered out: none ran)
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


def recap(results: Sequence[Result] | Counter[Status], wall_ms: float, *, unread: int = 0) -> str:
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
    from tabulate import tabulate  # (as render.table's render_table, which imports this module)

    headers = ["plan", *HEADERS] if show_plan else list(HEADERS)
    widths = {"target": TARGET_WIDTH, "note": NOTE_WIDTH}
    rows = [
        [fit(one_line(cells[h]), widths.get(h, 4096)) for h in headers]
        for cells in map(_cells, results)
    ]
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)


#: the statuses --problems shows (with any call that would ask or is denied)
PROBLEM_STATUSES = frozenset(
    {
        Status.ERROR,
        Status.TIMEOUT,
        Status.DENIED,
        Status.NEEDS_APPROVAL,
        Status.CANCELLED,
        Status.INTERRUPTED,
    }
)


def is_problem(result: Result) -> bool:
    """What ``--problems`` shows: a call denied, asking (a dry run's would-ask too), or
    failed."""
    return result.status in PROBLEM_STATUSES or result.decision in ("ask", "deny")


def decision_cells(r: Result, workspace: Workspace = ()) -> dict[str, str]:
    """A result's cells for a decision-first table: status, the call, who decided (the
    rule and its file:line), the reason; then time and execution id."""
    return {
        "status": str(r.status),
        "plan": r.plan,
        "#": str(r.index + 1),
        "id": r.id,
        "call": f"{r.tool}({target_of(r.tool, r.input, 1 << 16, workspace)})",
        "decided by": decider(r.decided_by.kind, r.decided_by.rule, r.decided_by.source),
        "reason": _note(r),
        "time": _ms(r.duration_ms) if r.started_at is not None else "",
        "execution": r.execution_id[:13],  # enough to tell calls apart; the journal has the rest
    }


def decision_columns(
    *,
    plans: int,
    plan: int,
    ids: int,
    calls: int,
    deciders: int = 44,
    reasons: int = 100,
    numbers: int = 4,
    status: int = len("needs_approval"),
) -> list[Column]:
    """The columns of exec's and show's tables, widest cells measured or guessed: the
    status and who decided get their room first, the reason takes what is left, and the
    time, # and execution id go (in that order) before anything else wraps too tight."""
    columns = [
        Column("status", status, priority=100, head=True),
        Column("plan", plan, minimum=8, priority=90, share=0.15, head=True),
        Column("id", ids, minimum=10, priority=90, share=0.15, head=True),
        Column("call", calls, minimum=20, priority=70, share=0.2, head=True, comfort=30),
        Column("decided by", deciders, minimum=18, priority=80, share=0.3, comfort=24),
        Column("reason", reasons, minimum=28, priority=60, comfort=40),
        Column("time", len("999 ms"), priority=50, drop=2),
        Column("#", numbers, priority=50, drop=4),
        Column("execution", 13, priority=50, drop=5),
    ]
    return [c for c in columns if c.name != "plan" or plans > 1]


class StreamingTable:
    """The table row by row, as results arrive, sized to the terminal: columns are sized
    from the plans up front; cells wrap (never cut) in their columns, and when the
    terminal is too narrow for the columns that decide, each result is a card."""

    def __init__(
        self,
        plans: Sequence[Plan],
        width: int | None = None,
        paint: Painter | None = None,
        workspace: Workspace = (),
    ) -> None:
        self.show_plan = len(plans) > 1
        self.paint = paint
        self.workspace = workspace
        calls = [c for p in plans for c in p.calls]
        # with no plan up front (calls streamed on stdin) the widths are guesses
        columns = decision_columns(
            plans=len(plans),
            plan=max((len(p.file) for p in plans), default=4),
            ids=max((len(c.id) for c in calls), default=10),
            calls=max(
                (len(c.tool) + 2 + len(target_of(c.tool, c.input, 4096, workspace)) for c in calls),
                default=40,
            ),
            numbers=len(str(max((len(p) for p in plans), default=9999))),
        )
        self.layout: Grid = grid(columns, width)
        self.cut = False  # nothing is cut: cells wrap

    def header(self) -> str:
        return "\n".join(self.layout.header())

    def row(self, result: Result) -> str:
        cells = decision_cells(result, self.workspace)
        return "\n".join(self.layout.row(cells, self.paint, str(result.status)))


def cut_note(run_id: str | None) -> str:
    """What the table says when it cut something to fit (no run id: no journal)."""
    return (
        f"(cut to fit: toolrun show {run_id} CALL)" if run_id else "(cut to fit: see --format json)"
    )


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
