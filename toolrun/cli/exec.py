"""``toolrun exec``: validate, decide and execute plans, printing ordered results."""

from __future__ import annotations

import contextlib
import io
import os
import select
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from toolrun.cli.options import (
    config_options,
    enforce_option,
    format_option,
    input_options,
    jobs_option,
    no_hooks_option,
    problems_option,
    sources_line,
    width_option,
)
from toolrun.cli.outputs import output_option, resolve
from toolrun.cli.style import Progress, status_painter, terminal_width, verbosity_options
from toolrun.errors import ExitCode

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from toolrun.execution.executor import AskAnswer
    from toolrun.execution.results import CallDecision, Result
    from toolrun.plan.models import Call, Plan
    from toolrun.render import results as render
    from toolrun.render.github import AnnotationPaths
    from toolrun.report.exec import ExecReport

FORMATS = ("text", "table", "json", "jsonl", "junit", "github", "sarif")


@click.command(name="exec")
@click.argument("plans", nargs=-1, required=True, type=click.Path(path_type=Path))
@config_options
@input_options
@click.option("--dry-run", is_flag=True, help="Partition and decide every call; execute nothing.")
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="After the results, print the diff of each file edit (with --dry-run: the diff it "
    "would make, applied in order to an in-memory copy; nothing is written).",
)
@format_option(FORMATS)
@output_option("a report of the run")
@jobs_option("Plans run side by side, each with a fair share of the capacity.")
@click.option(
    "--max-concurrency",
    type=click.IntRange(min=1),
    default=None,
    envvar="TOOLRUN_MAX_CONCURRENCY",
    help="Calls in flight at once [default: toolrun.maxConcurrency, 10].",
)
@click.option(
    "--ask",
    "ask_mode",
    type=click.Choice(["prompt", "deny", "allow"]),
    default=None,
    help="What an ask becomes: prompt (the default at a terminal), deny (otherwise), allow.",
)
@click.option("--no-journal", is_flag=True, help="Do not write .toolrun/runs/<run-id>.jsonl.")
@no_hooks_option
@enforce_option
@problems_option
@width_option
@verbosity_options
def exec_(
    plans: tuple[Path, ...],
    config_file: Path | None,
    settings_files: tuple[Path, ...],
    workspace: Path,
    mode: str | None,
    source_format: str | None,
    transcript_cwd: str | None,
    allow_empty: bool,
    dry_run: bool,
    show_diff: bool,
    fmt: str | None,
    outputs: tuple[Path, ...],
    jobs: int,
    max_concurrency: int | None,
    ask_mode: str | None,
    no_journal: bool,
    no_hooks: bool,
    enforce: str | None,
    problems: bool,
    width: int | None,
    quiet: bool,
    verbose: bool,
) -> int:
    """Run plans: validate, decide every call, execute what is allowed.

    A PLAN may be any input `toolrun check` reads (a Claude Code or Codex session, an API
    conversation, ...; detected, or named with --from): its calls are replayed, its
    recorded cwd mapped onto --workspace. A recorded call whose input its tool refused
    gets that error again.

    PLAN may be `-`: JSONL calls ({"tool", "input", "id"?}) on stdin, run as
    they arrive. A line that is not a valid call gets an error result and
    stops reading: the calls before it have run, none after it will (exit 3).
    Ctrl-C stops reading too; the recap counts the lines read but never run.

    Results print in plan order, each as soon as every earlier call has its
    own. Exit codes: 0 all ok, 1 a call failed (or the journal could not be
    written to the end), 3 invalid input (a plan or config: nothing ran; with
    `-`: a bad line), 4 a call was denied, 5 a call needed approval, 6 a
    hook stopped the run (`continue: false`, a PostToolBatch block: the
    calls after it were not run), 130
    interrupted (Ctrl-C, SIGTERM, or stdout closed; a second Ctrl-C exits at
    once), 129 interrupted by SIGHUP (its terminal closed).

    Text that is not valid UTF-8 (a directory's name, a program's output) is
    printed and journalled escaped: `\\xNN` for a program's bytes, `\\udcXX`
    for names (a JSON escape that reads back to the same name).
    """
    from toolrun.builtin_fields import workspace_dirs
    from toolrun.cli import logs
    from toolrun.commands.exec import ExecRequest, execute
    from toolrun.render import results as render

    reports = resolve(outputs)  # a bad name is a usage error before anything runs
    if fmt == "github" or os.environ.get("GITHUB_ACTIONS") == "true":
        logs.annotate(_annotation_paths())  # config warnings and errors on their lines
    out_tty = sys.stdout.isatty()
    err_tty = sys.stderr.isatty()
    fmt = fmt or ("table" if out_tty else "text")
    from_stdin = any(str(p) == "-" for p in plans)
    interactive = not from_stdin and (
        ask_mode == "prompt" or (ask_mode is None and sys.stdin.isatty() and err_tty)
    )
    # At a terminal the table streams row by row; redirected, it is printed whole at the end.
    streaming_table: list[render.StreamingTable] = []
    # a progress line on stderr when it is a terminal and stdout is not showing each result
    progress = Progress(enabled=err_tty and (fmt in ("json", "sarif") or not out_tty))

    several_plans: list[bool] = [False]
    paint = status_painter(out_tty)

    def on_plans(loaded: Sequence[Plan]) -> None:
        several_plans[0] = len(loaded) > 1
        if fmt == "table" and (out_tty or width is not None) and not quiet:
            table = render.StreamingTable(
                loaded, width or terminal_width(), paint, workspace_dirs(workspace)
            )
            streaming_table.append(table)
            if table.header():  # (cards have none)
                click.echo(table.header())

    warned: set[str] = set()

    # A tick's lines go out in one write at its flush: an unbuffered stdout (python -u,
    # PYTHONUNBUFFERED) would otherwise cost a write per result.
    pending: list[str] = []

    def show(line: str) -> None:
        pending.append(line + "\n")

    def flush() -> None:
        if pending:
            text = "".join(pending)
            pending.clear()
            _write_out(text)
        sys.stdout.flush()

    def on_result(result: Result) -> None:
        progress.tick(f"{result.id} {result.status}")
        sandbox = result.metadata.get("sandbox")
        warning = sandbox.get("warning") if isinstance(sandbox, dict) else None
        if warning and warning not in warned:  # bubblewrap missing: once per run, on stderr
            warned.add(warning)
            click.echo(f"toolrun: warning: sandbox unavailable, Bash calls are {warning}", err=True)
        if fmt == "jsonl":
            show(render.jsonl_line(result))
        elif quiet or (problems and not render.is_problem(result)):
            return
        elif fmt == "text":
            show(render.text_line(result, show_plan=several_plans[0], paint=paint))
        elif streaming_table:
            show(streaming_table[0].row(result))
        if verbose and (fmt == "text" or streaming_table):
            show("\n".join(render.verbose_lines(result)))

    try:
        report = execute(
            ExecRequest(
                plans=plans,
                workspace=workspace,
                config_file=config_file,
                settings_files=settings_files,
                mode=mode,
                enforce=enforce,
                dry_run=dry_run,
                jobs=jobs,
                max_concurrency=max_concurrency,
                ask_default="allow" if ask_mode == "allow" else "deny",
                journal=not no_journal,
                hooks=not no_hooks,
                # a stream shown line by line needs no results at the end: memory stays flat
                keep_results=not (
                    from_stdin and fmt in ("jsonl", "text") and not reports and not show_diff
                ),
                source_format=source_format,
                transcript_cwd=transcript_cwd,
                allow_empty=allow_empty,
            ),
            on_result=on_result,
            ask=_prompt if interactive and not dry_run else None,
            on_plans=on_plans,
            on_flush=flush,
        )
    finally:
        if pending:  # (shown but not flushed: a tick whose sink failed)
            with contextlib.suppress(OSError):
                flush()
    with contextlib.suppress(OSError):  # (stderr's terminal may have closed)
        progress.clear()
    for warning in report.warnings:  # records of a session that were skipped
        _say(f"toolrun: warning: {warning}")
    if report.stopped is not None:  # a hook's continue: false (#30): exit 6
        stop = report.stopped
        _say(f"toolrun: stopped by {stop.get('event')} hook `{stop.get('command')}` "
             f"({stop.get('source')}): {stop.get('reason')}")  # fmt: skip
    if report.output_error is not None:
        _silence_stdout()
        _say(
            f"toolrun: {report.output_error}; the calls after it were interrupted"
            + (f"; every result is in {report.journal_path}" if report.journal_path else "")
        )
    else:
        try:
            _print_report(
                report, fmt, streaming_table, quiet=quiet, workspace=workspace,
                problems=problems, width=width,
            )  # fmt: skip
        except OSError:  # stdout closed after the last result: nothing is lost
            _silence_stdout()
    code = report.exit_code
    if show_diff and fmt in ("text", "table") and report.output_error is None:
        try:
            _print_diffs(report, workspace, dry_run=dry_run)
        except OSError:
            _silence_stdout()
    from toolrun.cli.outputs import write

    for out in reports:
        error = write(out, _exec_report(out.kind, report, workspace))
        if error is not None:  # the run is over and journalled: say so, and fail
            _say(f"toolrun: cannot write {out.path}: {error}")
            code = ExitCode.combine((code, ExitCode.FAILED))
    if report.journal_error is not None:
        _say(f"toolrun: {report.journal_error}")
    elif report.journal_path is not None and fmt in ("table", "text"):
        _say(f"journal: {report.journal_path}")
    if fmt in ("table", "text", "github"):
        _say(sources_line(report.sources))
    # Everything is out and the journal closed: the process ends without the interpreter
    # freeing every module and record first (10 ms of a 1000-call run's last moments).
    import toolrun.cli

    toolrun.cli.exit_at_once = True
    return int(code)


def _write_out(text: str) -> None:
    """``text`` on stdout. Unbuffered (``-u``, ``PYTHONUNBUFFERED``), its bytes are written
    to their end: one write cut short by a reader that left (``| head -1``) says nothing,
    and the write after it must then fail, as a write per line did."""
    out = sys.stdout
    raw = getattr(out, "buffer", None)
    if not isinstance(raw, io.RawIOBase):
        out.write(text)
        return
    out.flush()  # (nothing waits there unbuffered; in order all the same)
    data = memoryview(text.encode(out.encoding, out.errors or "strict"))
    while data:
        written = raw.write(data)
        if written is None:  # a non-blocking stdout that is full: wait until it is not
            select.select([], [raw], [])
            continue
        data = data[written:]


def _annotation_paths() -> AnnotationPaths:
    from toolrun.render.github import AnnotationPaths

    return AnnotationPaths.from_env(os.environ, Path.cwd())


def _exec_report(kind: str, report: ExecReport, workspace: Path) -> Iterator[str]:
    """The whole report of a run in one of the -o (and --format) kinds."""
    from toolrun.render import results as render

    results = report.all_results
    if kind == "jsonl":
        for r in results:
            yield render.jsonl_line(r) + "\n"
    elif kind == "json":
        yield (
            render.json_report(
                report.run_id,
                report.plans,
                results,
                report.wall_ms,
                _json_extra(report),
                enforcement=(report.enforced, report.enforced_reason),
            )
            + "\n"
        )
    elif kind == "junit":
        from toolrun.render.junit import exec_junit_xml

        yield exec_junit_xml(report.plans, results, report.wall_ms)
    elif kind == "sarif":
        from toolrun.render.sarif import exec_sarif

        first = report.sources[0] if report.sources else None
        code = int(report.exit_code)
        yield from exec_sarif(results, _annotation_paths(), code, report.config_notes, first)
    elif kind == "summary":
        from toolrun.render.github import exec_summary

        recap = render.recap(report.tally.counts, report.wall_ms, unread=report.unread_lines)
        yield exec_summary(results, recap, _annotation_paths())
    else:  # github
        from toolrun.render.github import exec_annotations

        # autoVerify names files relative to the workspace (resolved, as the config is)
        resolved = workspace.expanduser().resolve()
        for line in exec_annotations(results, resolved, _annotation_paths()):
            yield line + "\n"


def _json_extra(report: ExecReport) -> dict[str, object]:
    extra: dict[str, object] = {
        "sources": list(report.sources),
        "config_warnings": list(report.config_warnings),
    }
    if report.plans == ("-",):
        extra["unread_lines"] = report.unread_lines
    return extra


def _print_report(
    report: ExecReport,
    fmt: str,
    streaming_table: Sequence[render.StreamingTable],
    *,
    quiet: bool = False,
    workspace: Path = Path(),
    problems: bool = False,
    width: int | None = None,
) -> None:
    from toolrun.render import results as render

    results = report.all_results
    recap = render.recap(report.tally.counts, report.wall_ms, unread=report.unread_lines)
    if (width is not None or sys.stdout.isatty()) and fmt in ("table", "text"):
        from toolrun.render.layout import wrap

        recap = "\n".join(wrap(recap, width or terminal_width()))
    if fmt == "table":
        if not streaming_table and not quiet:
            shown = [r for r in results if render.is_problem(r)] if problems else results
            click.echo(render.table(shown, show_plan=len(report.plans) > 1))
        click.echo(recap)
        if streaming_table and streaming_table[0].cut:
            click.echo(render.cut_note(report.run_id if report.journal_path else None))
    elif fmt in ("json", "junit", "sarif"):
        for chunk in _exec_report(fmt, report, workspace):
            click.echo(chunk, nl=False)
    elif fmt == "text":
        click.echo(recap)
    elif fmt == "github":
        for chunk in _exec_report("github", report, workspace):
            click.echo(chunk, nl=False)
        click.echo(recap)
    elif report.unread_lines:  # jsonl: stdout holds results only
        click.echo(recap, err=True)


def _print_diffs(report: ExecReport, workspace: Path, *, dry_run: bool) -> None:
    """Each file edit's diff, in plan order: what it changed, or (dry run) would change."""
    from toolrun.errors import ToolError
    from toolrun.tools.base import ToolContext
    from toolrun.tools.builtins._preview import EDIT_TOOLS, Preview

    preview = Preview(ToolContext.for_workspace(workspace))
    for r in report.all_results:
        if r.tool not in EDIT_TOOLS:
            continue
        if not dry_run:
            diff = r.metadata.get("diff") if r.status == "ok" else None
            if isinstance(diff, str):
                click.echo(f"# {r.id} {r.tool}\n{diff}", nl=not diff.endswith("\n"))
            continue
        if r.status != "skipped":  # denied (or not admitted): it would not run
            continue
        try:
            diff = preview.diff(r.tool, r.input)
        except (ToolError, ValueError) as exc:
            click.echo(f"# {r.id} {r.tool}: would fail: {exc}")
            continue
        note = " (if approved)" if r.decision == "ask" else ""
        click.echo(f"# {r.id} {r.tool}{note}\n{diff}", nl=not diff.endswith("\n"))


def _silence_stdout() -> None:
    """After stdout failed (closed by `head`): nothing more goes there, and the flush
    at exit does not fail with a traceback either."""
    _silence(sys.stdout)


def _silence(stream: TextIO) -> None:
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def _say(text: str) -> None:
    """A line on stderr; once stderr fails (its terminal closed: EIO), nothing more goes
    there, and the run's exit code stands (the journal has everything)."""
    try:
        click.echo(text, err=True)
    except OSError:
        _silence(sys.stderr)


async def _prompt(call: Call, decision: CallDecision) -> AskAnswer:
    import anyio

    return await anyio.to_thread.run_sync(ask_at_terminal, call, decision, abandon_on_cancel=True)


def ask_at_terminal(call: Call, decision: CallDecision) -> AskAnswer:
    """One approval prompt on stderr. "always" is offered only with a suggested rule, and
    says which rule it adds; end of input (Ctrl-D) is "no"."""
    from toolrun.builtin_fields import main_field
    from toolrun.execution.executor import ask_reason

    key = main_field(call.tool)
    what = call.input.get(key, "") if key else ""
    click.echo(
        f"\n{call.id}: {call.tool}({what}) needs approval — {ask_reason(decision.reason)}",
        err=True,
    )
    choices = ["y", "n"]
    question = "Allow? y = yes, n = no"
    if decision.suggested:
        rules = ", ".join(decision.suggested)
        click.echo(f'"always" adds the allow rule {rules} for the rest of this run', err=True)
        choices.append("a")
        question += ", a = always for this run"
    elif decision.suggested_why:
        click.echo(f'"always" is not offered: {decision.suggested_why}', err=True)
    try:
        answer = click.prompt(question, type=click.Choice(choices), default="n", err=True)
    except click.Abort:  # end of input (Ctrl-D): nobody approved it
        click.echo("n (end of input)", err=True)
        return "no"
    return {"y": "yes", "n": "no", "a": "always"}[answer]  # type: ignore[return-value]
