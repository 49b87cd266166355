"""Tables: via tabulate for output that is not a terminal (imported only when a table is
actually printed), and the decision-first tables of check, show and runs, laid out by
:mod:`toolrun.render.layout`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from toolrun.render.layout import Column, Grid, grid, measured
from toolrun.render.terminal import Painter


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=list(headers), tablefmt="simple", disable_numparse=True)


def fixed_row(cells: Sequence[str], widths: Sequence[int]) -> str:
    """One row of a table printed as it goes: cells padded to set widths (a longer cell
    pushes the rest along rather than being cut), the last one as it is."""
    padded = [c.ljust(w) for c, w in zip(cells, widths, strict=False)]
    return "  ".join([*padded, *cells[len(widths) :]]).rstrip()


def lines(table: Grid, rows: Iterable[Mapping[str, str]], paint: Painter | None = None) -> str:
    """A laid-out table, header and rows (each row's status cell coloured)."""
    out = list(table.header())
    for row in rows:
        out += table.row(row, paint, row.get(table.painted, ""))
    return "\n".join(out)


class CheckedCall(Protocol):
    """What a check table shows of a decided call (``commands.check.CallCheck``)."""

    @property
    def id(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def input(self) -> Mapping[str, Any]: ...
    @property
    def decision(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def rule(self) -> str | None: ...
    @property
    def source(self) -> str | None: ...
    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...
    @property
    def file(self) -> str: ...
    @property
    def turn(self) -> int: ...
    @property
    def run(self) -> int: ...
    @property
    def run_kind(self) -> str: ...
    @property
    def runs_in(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    def why(self) -> str: ...


def check_cells(call: CheckedCall, workspace: tuple[str, ...] = ()) -> dict[str, str]:
    """A checked call's cells: decision, the call, who decided (the rule and its
    file:line), the reason; then where the call is and how it would run."""
    from toolrun.builtin_fields import target_of
    from toolrun.render.results import decider

    where = f"{call.line}:{call.column}" if call.line else ""
    if where and call.file:  # read from another file than the input (a subagent's log)
        where = f"{call.file}:{where}"
    return {
        "decision": call.decision,
        "id": call.id,
        "call": f"{call.tool}({target_of(call.tool, call.input, 1 << 16, workspace)})",
        "decided by": decider(call.kind, call.rule, call.source),
        "reason": call.why(),
        "line": where,
        "turn": str(call.turn),
        "run": f"{call.run} {call.run_kind}" if call.run else "-",
        "runs in": call.runs_in or "",
    }


CHECK_COLUMNS = (
    Column("decision", 5, priority=100, head=True),
    Column("id", 10, minimum=10, priority=90, share=0.15, head=True),
    Column("call", 40, minimum=20, priority=70, share=0.2, head=True, comfort=30),
    Column("decided by", 40, minimum=18, priority=80, share=0.3, comfort=24),
    Column("reason", 80, minimum=28, priority=60, comfort=40),
    Column("line", 6, priority=50, drop=3),
    Column("turn", 4, priority=50, drop=4),
    Column("run", 12, priority=50, drop=2),
    Column("runs in", 16, priority=50, drop=1),
)


def check_table(
    calls: Sequence[CheckedCall],
    width: int,
    paint: Painter | None = None,
    workspace: tuple[str, ...] = (),
) -> str:
    """One input's calls as a table ``width`` columns wide, cells wrapped (never cut),
    each decision coloured; cards when the width is too narrow for a table."""
    rows = [check_cells(c, workspace) for c in calls]
    columns = [c for c in measured(CHECK_COLUMNS, rows) if any(r[c.name] for r in rows)]
    return lines(grid(columns, width, painted="decision"), rows, paint)


def check_problem(call: CheckedCall) -> bool:
    """What ``check --problems`` shows: a call that would be denied or ask, or is an error
    (a recorded call whose input its tool refused)."""
    return call.decision in ("deny", "ask") or call.status == "error"


# -- show and runs: past runs read back from the journal -------------------------------------


def journal_cells(
    record: Mapping[str, Any], note: str, workspace: tuple[str, ...] = (), mode: str | None = None
) -> dict[str, str]:
    """A journalled result's cells, as exec's table shows a result (``note``: its reason,
    whole)."""
    from toolrun.builtin_fields import target_of
    from toolrun.render.results import decider

    by = record.get("decided_by") or {}
    took = record.get("duration_ms")
    tool = str(record.get("tool", ""))
    kind = str(by.get("kind") or "")
    call_input = record.get("input")
    target = target_of(tool, call_input if isinstance(call_input, dict) else {}, 1 << 16, workspace)
    return {
        "status": str(record["status"]),
        "plan": str(record.get("plan", "")),
        "#": str(record["index"] + 1),
        "id": str(record["id"]),
        "call": f"{tool}({target})",
        "decided by": decider(kind, by.get("rule"), by.get("source"), mode) if kind else "",
        "reason": note,
        "time": f"{took:.0f} ms" if took is not None and record["status"] != "started" else "",
        "execution": str(record.get("execution_id", ""))[:13],
    }


#: how many results `show` measures its columns on before it prints (the rest wrap in them)
MEASURED_ROWS = 200


def journal_grid(rows: Sequence[Mapping[str, str]], plans: int, width: int) -> Grid:
    """The table `show` prints: exec's columns, measured on the first rows."""
    from toolrun.render.results import decision_columns

    columns = decision_columns(plans=plans, plan=4, ids=10, calls=40)
    if rows:
        columns = [
            replace(c, natural=max(c.natural, n)) if c.name == "status" else replace(c, natural=n)
            for c, n in zip(columns, _widest(columns, rows), strict=True)
        ]
    return grid(columns, width)


def _widest(columns: Sequence[Column], rows: Sequence[Mapping[str, str]]) -> list[int]:
    from toolrun.render.layout import text_width

    return [max(max(text_width(r.get(c.name, "")) for r in rows), 1) for c in columns]


def runs_cells(
    run_id: str, started: str, plans: Sequence[str], counts: Mapping[str, int], note: str
) -> dict[str, str]:
    """One past run's cells for `toolrun runs`."""
    from toolrun.render.layout import glued

    return {
        "run": run_id,
        "started": started,
        "plans": ", ".join(plans),
        "results": ", ".join(glued(f"{n} {s}") for s, n in sorted(counts.items())),
        "note": note,
    }


RUNS_COLUMNS = (
    Column("run", 23, priority=100, head=True),
    Column("started", 24, priority=90, drop=1),
    Column("plans", 20, minimum=12, priority=70, share=0.3, head=True),
    Column("results", 40, minimum=16, priority=80, share=0.4),
    Column("note", 40, minimum=12, priority=60),
)


def runs_table(rows: Sequence[Mapping[str, str]], width: int) -> str:
    """`toolrun runs` laid out for ``width`` columns (cards when narrower than a table)."""
    columns = [
        c for c in measured(RUNS_COLUMNS, rows) if c.name != "note" or any(r["note"] for r in rows)
    ]
    return lines(grid(columns, width, painted=""), rows)
