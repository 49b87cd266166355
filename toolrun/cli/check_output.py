"""What ``toolrun check`` prints: each input as it is checked, then the recap or the report.

Text and table lines (a table sized to the terminal), GitHub annotations, the problems
on stderr; at the end the recap or the whole report (JSON, JSONL, JUnit, SARIF) on stdout,
the ``-o`` reports and, in a GitHub job, the step summary. The words and records themselves
are :mod:`toolrun.report`'s; this module only prints them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolrun.cli.style import status_painter, terminal_width
from toolrun.report.recap import plan_header, recap
from toolrun.report.records import batches, json_report, report_lines

if TYPE_CHECKING:
    from toolrun.cli.outputs import Output
    from toolrun.errors import Problem
    from toolrun.render.github import AnnotationPaths
    from toolrun.report.models import CallCheck, CheckReport, PlanCheck


def finish(
    report: CheckReport, fmt: str, reports: tuple[Output, ...], width: int | None = None
) -> int:
    """After every input was shown: the summary (or the whole report) and the -o reports."""
    from toolrun.cli.outputs import write

    if report.shard is None:
        _step_summary(report)
    if fmt in ("table", "text", "github"):
        from toolrun.cli.options import sources_line

        click.echo(sources_line(report.config_files), err=True)
        click.echo(_fitted(recap(report), width))
    else:
        for chunk in _report(fmt, report):
            click.echo(chunk, nl=False)
    failed = [(out, error) for out in reports if (error := write(out, _report(out.kind, report)))]
    for out, error in failed[:-1]:
        click.echo(f"toolrun: cannot write {out.path}: {error}", err=True)
    if failed:  # every report that could be was written; the check's code gives way to 1
        out, error = failed[-1]
        raise click.FileError(str(out.path), hint=error)
    return int(report.exit_code)


@dataclass(frozen=True, slots=True)
class View:
    """How text and tables show the calls: only the problems (--problems), how wide
    (--width), paths relative to which workspace."""

    problems: bool = False
    width: int | None = None
    workspace: Path | None = None

    def calls(self, plan: PlanCheck) -> Sequence[CallCheck]:
        from toolrun.render.table import check_problem

        return [c for c in plan.calls if check_problem(c)] if self.problems else plan.calls


_PLAIN = View()


def streamer(
    fmt: str, *, quiet: bool, verbose: bool, view: View = _PLAIN
) -> Callable[[PlanCheck], None]:
    """What to print for each input as soon as it (and every earlier one) is checked;
    with --quiet only its problems (on stderr), the recap comes at the end; with
    --problems only the calls that would be denied or ask, and no header for an input
    that has none."""
    if quiet and fmt in ("text", "table"):
        return print_problems
    if fmt == "text":
        return lambda plan: _text_plan(plan, verbose=verbose, view=view)
    if fmt == "table":
        return lambda plan: _table_plan(plan, verbose=verbose, view=view)
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
    elif fmt == "sarif":
        from toolrun.render.sarif import check_sarif

        yield from check_sarif(report, annotation_paths(), report.config_notes)
    elif fmt == "summary":
        from toolrun.render.github import step_summary

        yield step_summary(report, recap(report), annotation_paths())
    else:
        from toolrun.render.github import annotation_lines

        for line in annotation_lines(report, annotation_paths()):
            yield line + "\n"
        yield recap(report) + "\n"


# -- text and table -------------------------------------------------------------------------


def print_problems(plan: PlanCheck) -> None:
    from toolrun.cli.logs import annotating, annotation

    if annotating() is not None:  # in a GitHub job: on the file and line
        for level, found in (("error", plan.problems), ("warning", plan.warnings)):
            for problem in found:
                click.echo(annotation(level, _located(problem, plan.file)), err=True)
        return
    for problem in plan.problems:
        click.echo(str(problem), err=True)
    for warning in plan.warnings:
        click.echo(f"warning: {warning}", err=True)


def _located(problem: Problem, file: str) -> Problem:
    """A problem of an input without a place of its own: on the input's file."""
    if problem.location is not None:
        return problem
    from dataclasses import replace

    from toolrun.errors import Location

    return replace(problem, location=Location(file, 1, 1))


def _text_plan(plan: PlanCheck, *, verbose: bool = False, view: View = _PLAIN) -> None:
    from toolrun.builtin_fields import target_of
    from toolrun.render.terminal import one_line as escaped

    # printable text is its own one line (a C check, where the escaping is a regex)
    print_problems(plan)
    calls = view.calls(plan)
    if view.problems and not calls and not plan.problems:
        return  # nothing to show of this input: the recap counts it
    paint = status_painter(sys.stdout.isatty())
    lines = [plan_header(plan)]
    padded: dict[str, str] = {}  # each decision's column, made once
    for c in calls:
        where = f"{c.file or plan.file}:{c.line}:{c.column}" if c.line else plan.file
        run = f"run {c.run} {c.run_kind}" if c.run else "not admitted"
        if c.origin:
            run += f" · {c.origin}"
        if c.runs_in:
            run += f" · {c.runs_in}"
        decision = padded.get(c.decision)
        if decision is None:
            decision = padded[c.decision] = f"{c.decision:<5}"
        # (one_line inline: a line a call, and most texts are printable as they are)
        call_id, target, why = c.id, target_of(c.tool, c.input, 60), c.why()
        lines.append(
            f"{where}: {paint(decision, c.decision) if paint else decision} "
            f"{call_id if call_id.isprintable() else escaped(call_id)} "
            f"{c.tool}({target if target.isprintable() else escaped(target)}) · turn {c.turn}"
            f" · {run} — {why if why.isprintable() else escaped(why)}"
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


def _table_plan(plan: PlanCheck, *, verbose: bool = False, view: View = _PLAIN) -> None:
    print_problems(plan)
    calls = view.calls(plan)
    if view.problems and not calls and not plan.problems:
        return  # nothing to show of this input: the recap counts it
    click.echo(_fitted(plan_header(plan), view.width))
    if not calls:
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
        for c in calls
    ]
    if sys.stdout.isatty() or view.width is not None:
        from toolrun.builtin_fields import workspace_dirs
        from toolrun.render.table import check_table

        paint = status_painter(sys.stdout.isatty())
        width = view.width or terminal_width()
        click.echo(check_table(calls, width, paint, workspace_dirs(view.workspace)))
    else:
        from toolrun.render.table import render_table
        from toolrun.render.terminal import fit, one_line

        widths = {"target": 40, "reason": 70}
        headers = list(rows[0])
        cells = [[fit(one_line(r[h]), widths.get(h, 4096)) for h in headers] for r in rows]
        click.echo(render_table(headers, cells))
    if verbose:
        for c in calls:
            click.echo(f"{c.id}:\n" + "\n".join(_verbose_lines(c)))
    click.echo()


def _fitted(line: str, width: int | None = None) -> str:
    """A line wrapped to ``width`` (at a terminal: its width), the rest of it indented;
    elsewhere as it is."""
    if width is None and not sys.stdout.isatty():
        return line
    from toolrun.render.layout import wrap

    width = width or terminal_width()
    first, *rest = wrap(line, width - 4, first=width)
    return "\n".join([first, *("    " + piece for piece in rest)])


def _github_plan(plan: PlanCheck) -> None:
    from toolrun.render.github import plan_annotations

    for line in plan_annotations(plan, annotation_paths()):
        click.echo(line)


def annotation_paths() -> AnnotationPaths:
    from toolrun.render.github import AnnotationPaths

    return AnnotationPaths.from_env(os.environ, Path.cwd())


def _step_summary(report: CheckReport) -> None:
    """In a GitHub job, append the Markdown summary to the file GITHUB_STEP_SUMMARY names."""
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if not summary_file:
        return
    from toolrun.render.github import step_summary

    text = step_summary(report, recap(report), annotation_paths())
    try:
        with open(summary_file, "a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
    except OSError as exc:  # the check itself is done: say so, keep its exit code
        click.echo(f"toolrun: cannot write the step summary {summary_file}: {exc}", err=True)
