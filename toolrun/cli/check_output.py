"""What ``toolrun check`` prints: each input as it is checked, then the recap or the report.

Text and table lines (a table sized to the terminal), GitHub annotations, the problems
on stderr; at the end the recap or the whole report (JSON, JSONL, JUnit) on stdout, the
``-o`` report and, in a GitHub job, the step summary. The words and records themselves
are :mod:`toolrun.report`'s; this module only prints them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolrun.cli.style import status_painter, terminal_width
from toolrun.report.recap import plan_header, recap
from toolrun.report.records import batches, json_report, report_lines

if TYPE_CHECKING:
    from toolrun.render.github import AnnotationPaths
    from toolrun.report.models import CallCheck, CheckReport, PlanCheck


def finish(
    report: CheckReport, fmt: str, output: Path | None, report_format: str | None
) -> int:
    """After every input was shown: the summary (or the whole report) and the -o report."""
    _step_summary(report)
    if fmt in ("table", "text", "github"):
        from toolrun.cli.options import sources_line

        click.echo(sources_line(report.config_files), err=True)
        click.echo(recap(report))
    else:
        for chunk in _report(fmt, report):
            click.echo(chunk, nl=False)
    if output is not None and report_format is not None:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            with output.open("w", encoding="utf-8") as fh:
                for chunk in _report(report_format, report):
                    fh.write(chunk)
        except OSError as exc:
            raise click.FileError(str(output), hint=exc.strerror or str(exc)) from None
    return int(report.exit_code)


def streamer(fmt: str, *, quiet: bool, verbose: bool) -> Callable[[PlanCheck], None]:
    """What to print for each input as soon as it (and every earlier one) is checked;
    with --quiet only its problems (on stderr), the recap comes at the end."""
    if quiet and fmt in ("text", "table"):
        return print_problems
    if fmt == "text":
        return lambda plan: _text_plan(plan, verbose=verbose)
    if fmt == "table":
        return lambda plan: _table_plan(plan, verbose=verbose)
    if fmt == "github":
        return _github_plan
    return print_problems  # the report comes at the end; its problems on stderr as they come


def _report(fmt: str, report: CheckReport) -> Iterator[str]:
    """A whole report, in chunks (JSON and JSONL record by record, never as one string)."""
    if fmt == "junit":
        from toolrun.render.junit import junit_chunks

        for batch in batches(junit_chunks(report)):
            yield "".join(batch)
    elif fmt == "json":
        yield from json_report(report)
    elif fmt == "jsonl":
        for batch in batches(report_lines(report)):
            yield "\n".join(batch) + "\n"
    else:
        from toolrun.render.github import annotation_lines

        for line in annotation_lines(report, _annotation_paths()):
            yield line + "\n"
        yield recap(report) + "\n"


def print_problems(plan: PlanCheck) -> None:
    for problem in plan.problems:
        click.echo(str(problem), err=True)
    for warning in plan.warnings:
        click.echo(f"warning: {warning}", err=True)


def _text_plan(plan: PlanCheck, *, verbose: bool = False) -> None:
    from toolrun.builtin_fields import target_of
    from toolrun.render.terminal import one_line as escaped

    def one_line(text: str) -> str:
        # printable text is its own one line (a C check, where the escaping is a regex)
        return text if text.isprintable() else escaped(text)

    print_problems(plan)
    paint = status_painter(sys.stdout.isatty())
    lines = [plan_header(plan)]
    for c in plan.calls:
        where = f"{c.file or plan.file}:{c.line}:{c.column}" if c.line else plan.file
        run = f"run {c.run} {c.run_kind}" if c.run else "not admitted"
        if c.origin:
            run += f" · {c.origin}"
        if c.runs_in:
            run += f" · {c.runs_in}"
        decision = f"{c.decision:<5}"
        lines.append(
            f"{where}: {paint(decision, c.decision) if paint else decision} {one_line(c.id)} "
            f"{c.tool}({one_line(target_of(c.tool, c.input, 60))}) · turn {c.turn} · {run} — "
            f"{one_line(c.why())}"
        )
        if c.rebased:
            lines.extend(_rebased_lines(c))
        if verbose:
            lines += _verbose_lines(c)
        if len(lines) >= 1000:  # a few big writes rather than one per call
            click.echo("\n".join(lines))
            lines.clear()
    if lines:
        click.echo("\n".join(lines))


def _rebased_lines(call: CallCheck) -> list[str]:
    """Where a transcript's recorded paths were decided (``--transcript-cwd``)."""
    return [
        f"    {field} recorded {recorded} → decided as {new}"
        for field, recorded, new in call.rebased
        if recorded != new
    ]


def _verbose_lines(call: CallCheck) -> list[str]:
    """--verbose: who decided, and every hook that ran, indented under the call."""
    from toolrun.render.results import hooks_lines
    from toolrun.render.terminal import one_line

    by = f"{call.kind} {call.rule}" if call.rule else call.kind
    by += f" ({call.source})" if call.source else ""
    lines = [f"decided: {call.decision} by {by}"]
    if call.runs_in:
        lines.append(f"runs in: {call.runs_in} — {call.runs_in_why}")
    lines += [f"hook: {line}" for line in hooks_lines(call.hooks)]
    return ["    " + one_line(line) for line in lines]


def _table_plan(plan: PlanCheck, *, verbose: bool = False) -> None:
    print_problems(plan)
    click.echo(plan_header(plan))
    if not plan.calls:
        return
    rows = [
        {
            "turn": str(c.turn),
            "run": f"{c.run} {c.run_kind}" if c.run else "-",
            "#": str(c.position + 1),
            "id": c.id,
            "tool": c.tool,
            "target": c.target,
            "decision": f"{c.decision} ({c.kind})",
            "runs in": c.runs_in or "",
            "reason": c.why(),
        }
        for c in plan.calls
    ]
    if sys.stdout.isatty():
        click.echo(_terminal_table(plan, rows))
    else:
        from toolrun.render.table import render_table
        from toolrun.render.terminal import fit, one_line

        widths = {"target": 40, "reason": 70}
        headers = list(rows[0])
        cells = [[fit(one_line(r[h]), widths.get(h, 4096)) for h in headers] for r in rows]
        click.echo(render_table(headers, cells))
    if verbose:
        for c in plan.calls:
            click.echo(f"{c.id}:\n" + "\n".join(_verbose_lines(c)))
    click.echo()


def _terminal_table(plan: PlanCheck, rows: list[dict[str, str]]) -> str:
    """The table sized to the terminal (turn, run and # go first when it is narrow; the
    target and the reason shrink, cut with …), decisions coloured."""
    from toolrun.render.terminal import Column, layout

    def widest(name: str) -> int:
        return max(len(r[name]) for r in rows)

    columns = [
        Column("turn", widest("turn"), drop=3),
        Column("run", widest("run"), drop=2),
        Column("#", widest("#"), drop=4),
        Column("id", widest("id")),
        Column("tool", widest("tool")),
        Column("target", widest("target"), flex=True, minimum=12),
        Column("decision", widest("decision")),
        Column("runs in", widest("runs in"), drop=1),
        Column("reason", 4096, flex=True, minimum=12),
    ]
    table = layout(columns, terminal_width())
    paint = status_painter(True)
    lines = [table.header()]
    for row, call in zip(rows, plan.calls, strict=True):
        lines.append(table.line(table.cells(row), paint, call.decision, painted="decision"))
    return "\n".join(lines)


def _github_plan(plan: PlanCheck) -> None:
    from toolrun.render.github import plan_annotations

    for line in plan_annotations(plan, _annotation_paths()):
        click.echo(line)


def _annotation_paths() -> AnnotationPaths:
    from toolrun.render.github import AnnotationPaths

    return AnnotationPaths.from_env(os.environ, Path.cwd())


def _step_summary(report: CheckReport) -> None:
    """In a GitHub job, append the Markdown summary to the file GITHUB_STEP_SUMMARY names."""
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if not summary_file:
        return
    from toolrun.render.github import step_summary

    text = step_summary(report, recap(report), _annotation_paths())
    try:
        with open(summary_file, "a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
    except OSError as exc:  # the check itself is done: say so, keep its exit code
        click.echo(f"toolrun: cannot write the step summary {summary_file}: {exc}", err=True)

