"""``toolrun check``: decide every call of many plans and transcripts, for CI."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolrun.cli.options import (
    JobsType,
    config_options,
    enforce_option,
    format_option,
    input_options,
    no_hooks_option,
    policy_options,
    problems_option,
)
from toolrun.cli.outputs import Output, output_option, resolve
from toolrun.cli.style import Progress, status_painter, terminal_width, verbosity_options
from toolrun.report.recap import plan_header, recap
from toolrun.report.records import batches, json_report, report_lines

if TYPE_CHECKING:
    from toolrun.commands.check import CheckRequest
    from toolrun.errors import Problem
    from toolrun.render.github import AnnotationPaths
    from toolrun.report.models import CallCheck, CheckReport, PlanCheck
    from toolrun.report.shards import Shard

FORMATS = ("table", "text", "json", "jsonl", "junit", "github", "sarif")
REPORT_FORMATS = ("junit", "json", "jsonl", "github", "sarif", "summary")
#: the -o reports a policy diff can write
DIFF_FORMATS = ("junit", "json", "jsonl", "github")


@click.command()
@click.argument("inputs", metavar="PLAN_OR_GLOB...", nargs=-1, required=True)
@config_options
@input_options
@click.option(
    "--fail-on",
    type=click.Choice(["deny", "ask", "never", "loosen"]),
    default="deny",
    show_default=True,
    help="Which decisions fail the check: deny (exit 4), ask (also exit 5), never; with "
    "--compare-config/--compare-settings: loosen (exit 4 when a decision loosens) or never.",
)
@format_option(FORMATS)
@output_option("a report")
@click.option(
    "--report-format",
    type=click.Choice(REPORT_FORMATS),
    default=None,
    help="Format of every -o report, whatever its name (summary: the Markdown step summary).",
)
@click.option(
    "--jobs",
    type=JobsType(),
    default="auto",
    show_default=True,
    help="Processes: several inputs are checked side by side (output keeps the input "
    "order); a single input is split by its turns between them. auto: a JSON or YAML plan of "
    "20,000 calls or more is split in two on a machine of two cores or more (each process "
    "decodes and holds only its own turns: the same report, the check's memory about 1.3 "
    "times one process's).",
)
@no_hooks_option
@enforce_option
@problems_option
@policy_options
@click.option(
    "--compare-config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Policy diff: decide every call under this toolrun.yaml too and report only the "
    "calls whose decision changes (loosened, tightened).",
)
@click.option(
    "--compare-settings",
    type=click.Path(dir_okay=False, path_type=Path),
    multiple=True,
    help="Policy diff against these settings files (instead of the --settings files); "
    "repeatable.",
)
@click.option(
    "--shard",
    metavar="K/N",
    default=None,
    callback=lambda _ctx, _param, value: _shard(value),
    help="Check only shard K of N: the inputs (after expanding globs) whose path hashes "
    "(sha256) to K. N CI jobs, one per K, check the whole corpus; merge their JSON "
    "reports with --merge-reports.",
)
@click.option(
    "--merge-reports",
    is_flag=True,
    help="The arguments are JSON reports of check --shard K/N jobs: print the one report "
    "(in --format) and exit with the code the unsharded check would give.",
)
@verbosity_options
@click.pass_context
def check(
    ctx: click.Context,
    inputs: tuple[str, ...],
    config_file: Path | None,
    settings_files: tuple[Path, ...],
    workspace: Path,
    mode: str | None,
    source_format: str | None,
    transcript_cwd: str | None,
    allow_empty: bool,
    fail_on: str,
    fmt: str | None,
    outputs: tuple[Path, ...],
    report_format: str | None,
    jobs: int | None,
    no_hooks: bool,
    enforce: str | None,
    problems: bool,
    strict: bool,
    managed_settings: Path | None,
    compare_config: Path | None,
    compare_settings: tuple[Path, ...],
    shard: Shard | None,
    merge_reports: bool,
    quiet: bool,
    verbose: bool,
) -> int:
    """Decide every call of plans and agent transcripts; execute nothing.

    Each PLAN_OR_GLOB is a file or a glob pattern (quoted ones are expanded too; ** spans
    folders), in one of these formats, detected from its content or named with --from:

    \b
      toolrun           a toolrun plan, YAML or JSON
                          toolrun check 'plans/**/*.yaml'
      jsonl             a call stream, {"tool": ..., "input": ...} a line
                          toolrun check calls.jsonl
      codex             a Codex CLI rollout (JSONL; the older shape too)
                          toolrun check ~/.codex/sessions/2025/10/29/rollout-*.jsonl
      codex-exec        `codex exec --json` output (JSONL events)
                          codex exec --json 'fix it' > run.jsonl; toolrun check run.jsonl
      claude-stream     `claude -p --output-format stream-json` output (JSONL)
                          claude -p --output-format stream-json --verbose 'fix it' >
                          run.jsonl; toolrun check run.jsonl
      claude-code       a Claude Code session (JSONL; its subagents/ logs are read too)
                          toolrun check ~/.claude/projects/-home-dev-proj/SESSION.jsonl
      chat-jsonl        one chat message a line (ccusage's chat.jsonl, exports)
                          toolrun check --from chat-jsonl chat.jsonl
      gemini            a Gemini CLI session (JSON; it records no cwd)
                          toolrun check --transcript-cwd ~/proj ~/.gemini/tmp/HASH/chats/*.json
      openai-responses  an OpenAI Responses API response or input list (JSON)
                          toolrun check --from openai-responses response.json
      anthropic         an Anthropic Messages API conversation (JSON; the API's bash,
                        text editor and web tools are Bash, Read/Write/Edit, WebFetch...)
                          toolrun check --from anthropic conversation.json
      openai            an OpenAI Chat Completions conversation (JSON)
                          toolrun check --from openai chat.json

    An input must yield calls: one toolrun cannot read, or whose records hold no call, is
    invalid (exit 3) unless --allow-empty. A recorded call whose input its tool would have
    refused (the agent got an error) is one error, decided as a deny; the rest is decided.

    Every call goes through the permission rules and PreToolUse hooks exactly as `toolrun
    exec` would decide it, and is shown with its turn and run (the partition into concurrent
    and exclusive runs). A session's calls are decided as if its recorded cwd (or
    --transcript-cwd) were the workspace.

    Exit codes: 0 nothing fails; 4 a call would be denied; 5 a call would ask (with
    --fail-on ask); 3 an input or the config is invalid (every input is still checked and
    reported). When several apply: 3, then 4, then 5.

    Policy diff: with --compare-config NEW (or --compare-settings NEW), every call is
    decided under both configs and only the calls whose decision changes are reported,
    as loosened (deny→ask/allow, ask→allow) or tightened, with both deciders. Exit 4
    with --fail-on loosen when any decision loosens; 3 when an input or a config is
    invalid; 0 otherwise.

    Sharding: --shard K/N checks the inputs whose path (relative to the current directory)
    hashes to shard K; each shard's JSON report (--format json or -o FILE.json) holds what
    a merge needs, and `toolrun check --merge-reports shard-*.json` prints the one report
    and exits with the one code the unsharded check would give.
    """
    from toolrun.cli import logs
    from toolrun.commands.check import CheckRequest
    from toolrun.commands.check import check as run_check

    fmt = fmt or ("table" if sys.stdout.isatty() else "text")
    reports = resolve(outputs, report_format, "; or use --report-format " + "|".join(REPORT_FORMATS))
    # In CI the config's warnings and problems are annotations on their file and line, but
    # a shard leaves annotations and the step summary to the merge: said once, not N times.
    in_job = os.environ.get("GITHUB_ACTIONS") == "true"
    if shard is None and (fmt == "github" or in_job):
        logs.annotate(_annotation_paths())
    elif shard is not None and (fmt == "github" or os.environ.get("GITHUB_STEP_SUMMARY")):
        click.echo(
            "toolrun: a shard writes its report only: annotations and the step summary come "
            "from check --merge-reports",
            err=True,
        )
        fmt = "text" if fmt == "github" else fmt
    if merge_reports:
        if shard is not None or compare_config is not None or compare_settings:
            raise click.BadParameter(
                "merges reports only: no --shard, --compare-config or --compare-settings",
                param_hint="'--merge-reports'",
            )
        if fail_on == "loosen":
            raise click.BadParameter(
                "loosen needs --compare-config or --compare-settings", param_hint="'--fail-on'"
            )
        explicit = ctx.get_parameter_source("fail_on") is not click.core.ParameterSource.DEFAULT
        report = _merged(inputs, fail_on if explicit else None)
        if logs.annotating() is not None:  # the shards' config said its warnings to none
            from toolrun.render.github import config_annotations

            for line in config_annotations(report.config_notes, _annotation_paths()):
                click.echo(line, err=True)
        stream = _streamer(fmt, quiet=quiet, verbose=verbose, problems=problems)
        for plan in report.plans:
            stream(plan)
        return _finish(report, fmt, reports)
    request = CheckRequest(
        inputs=inputs,
        workspace=workspace,
        config_file=config_file,
        settings_files=settings_files,
        mode=mode,
        enforce=enforce,
        source_format=source_format,
        transcript_cwd=transcript_cwd,
        allow_empty=allow_empty,
        hooks=not no_hooks,
        jobs=jobs,
        fail_on=fail_on,
        strict=strict,
        managed_settings=managed_settings,
        shard=shard,
    )
    if compare_config is not None or compare_settings:
        compare = (compare_config, compare_settings)
        return _policy_diff(ctx, request, compare, fmt, reports)
    if fail_on == "loosen":
        raise click.BadParameter(
            "loosen needs --compare-config or --compare-settings", param_hint="'--fail-on'"
        )
    stream = _streamer(fmt, quiet=quiet, verbose=verbose, problems=problems)
    # progress on stderr at a terminal, while stdout is not showing each input as it comes
    progress = Progress(
        enabled=sys.stderr.isatty()
        and (quiet or fmt not in ("table", "text") or not sys.stdout.isatty()),
        noun="inputs checked",
    )

    def show(plan: PlanCheck) -> None:
        progress.clear()
        stream(plan)
        progress.tick(plan.file)

    report = run_check(request, on_plan=show)
    progress.clear()
    return _finish(report, fmt, reports)


def _finish(report: CheckReport, fmt: str, reports: tuple[Output, ...]) -> int:
    """After every input was shown: the summary (or the whole report) and the -o reports."""
    from toolrun.cli.outputs import write

    if report.shard is None:
        _step_summary(report)
    if fmt in ("table", "text", "github"):
        from toolrun.cli.options import sources_line

        click.echo(sources_line(report.config_files), err=True)
        click.echo(recap(report))
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


def _shard(value: str | None) -> Shard | None:
    if value is None:
        return None
    from toolrun.report.shards import parse_shard

    try:
        return parse_shard(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _merged(inputs: tuple[str, ...], fail_on: str | None) -> CheckReport:
    """The reports named (files or globs) merged into one (InvalidInputError: cannot)."""
    from toolrun.commands.check import expand_inputs
    from toolrun.commands.merge_reports import merge_reports
    from toolrun.errors import InvalidInputError, Problem

    files: list[tuple[str, Path]] = []
    unmatched: list[Problem] = []
    for shown, path in expand_inputs(inputs):
        if path is None:
            unmatched.append(Problem(None, "", f"{shown}: no file matches this pattern"))
        else:
            files.append((shown, path))
    if unmatched:
        raise InvalidInputError(unmatched)
    return merge_reports(files, fail_on=fail_on)


def _streamer(
    fmt: str, *, quiet: bool, verbose: bool, problems: bool = False
) -> Callable[[PlanCheck], None]:
    """What to print for each input as soon as it (and every earlier one) is checked;
    with --quiet only its problems (on stderr), the recap comes at the end; with
    --problems only the calls that would be denied or ask, and no header for an input
    that has none."""
    if quiet and fmt in ("text", "table"):
        return _problems
    if fmt == "text":
        return lambda plan: _text_plan(plan, verbose=verbose, problems=problems)
    if fmt == "table":
        return lambda plan: _table_plan(plan, verbose=verbose, problems=problems)
    if fmt == "github":
        return _github_plan
    return _problems  # the report comes at the end; its problems on stderr as they come


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
        from toolrun.render.sarif import check_sarif, sarif_text

        yield sarif_text(check_sarif(report, _annotation_paths(), report.config_notes))
    elif fmt == "summary":
        from toolrun.render.github import step_summary

        yield step_summary(report, recap(report), _annotation_paths())
    else:
        from toolrun.render.github import annotation_lines

        for line in annotation_lines(report, _annotation_paths()):
            yield line + "\n"
        yield recap(report) + "\n"


# -- text and table -------------------------------------------------------------------------


def _problems(plan: PlanCheck) -> None:
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


def _shown(plan: PlanCheck, problems: bool) -> tuple[CallCheck, ...]:
    """The calls a text or table view lists: all, or (--problems) those denied or asking."""
    if not problems:
        return plan.calls
    return tuple(c for c in plan.calls if c.decision != "allow" or c.status == "error")


def _text_plan(plan: PlanCheck, *, verbose: bool = False, problems: bool = False) -> None:
    from toolrun.builtin_fields import target_of
    from toolrun.render.terminal import one_line as escaped

    def one_line(text: str) -> str:
        # printable text is its own one line (a C check, where the escaping is a regex)
        return text if text.isprintable() else escaped(text)

    _problems(plan)
    calls = _shown(plan, problems)
    if problems and not calls:
        return
    paint = status_painter(sys.stdout.isatty())
    lines = [plan_header(plan)]
    for c in calls:
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


def _table_plan(plan: PlanCheck, *, verbose: bool = False, problems: bool = False) -> None:
    _problems(plan)
    calls = _shown(plan, problems)
    if problems and not calls:
        return
    click.echo(plan_header(plan))
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
    if sys.stdout.isatty():
        click.echo(_terminal_table(calls, rows))
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


def _terminal_table(calls: tuple[CallCheck, ...], rows: list[dict[str, str]]) -> str:
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
    for row, call in zip(rows, calls, strict=True):
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


# -- policy diff (--compare-config) -----------------------------------------------------------


def _policy_diff(
    ctx: click.Context,
    request: CheckRequest,
    compare: tuple[Path | None, tuple[Path, ...]],
    fmt: str,
    reports: tuple[Output, ...],
) -> int:
    """``check --compare-config``: only the calls whose decision changes, in ``fmt``."""
    from dataclasses import replace

    from toolrun.cli.outputs import write

    for out in reports:
        if out.kind not in DIFF_FORMATS:
            raise click.BadParameter(
                f"a policy diff writes {', '.join(DIFF_FORMATS)} reports, not {out.kind} "
                f"({out.path})",
                param_hint="'-o'",
            )
    if fmt == "sarif":
        raise click.BadParameter(
            "a policy diff has no SARIF form (table, text, json, jsonl, junit, github)",
            param_hint="'--format'",
        )

    from toolrun.commands.check import compare as run_compare
    from toolrun.policy import diff as render

    if request.fail_on not in ("loosen", "never"):
        if ctx.get_parameter_source("fail_on") is not click.core.ParameterSource.DEFAULT:
            raise click.BadParameter(
                "with --compare-config/--compare-settings use loosen or never",
                param_hint="'--fail-on'",
            )
        request = replace(request, fail_on="never")
    diff = run_compare(
        request, config_file=compare[0], settings_files=compare[1], on_plan=_problems
    )

    def chunks(kind: str) -> Iterator[str]:
        if kind == "json":
            yield render.json_text(diff)
        elif kind == "junit":
            yield render.junit_xml(diff)
        else:
            lines = {"jsonl": render.jsonl_lines, "github": render.github_lines}.get(
                kind, render.text_lines
            )
            for line in lines(diff):
                yield line + "\n"

    for chunk in chunks(fmt):
        click.echo(chunk, nl=False)
    for out in reports:
        error = write(out, chunks(out.kind))
        if error is not None:
            raise click.FileError(str(out.path), hint=error)
    return int(diff.exit_code)
