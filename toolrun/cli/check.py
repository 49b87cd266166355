"""``toolrun check``: decide every call of many plans and transcripts, for CI."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolrun.cli.check_output import View, annotation_paths, finish, print_problems, streamer
from toolrun.cli.options import (
    JobsType,
    config_options,
    enforce_option,
    format_option,
    input_options,
    no_hooks_option,
    policy_options,
    problems_option,
    width_option,
)
from toolrun.cli.outputs import Output, output_option, resolve
from toolrun.cli.style import Progress, verbosity_options

if TYPE_CHECKING:
    from toolrun.commands.check import CheckRequest
    from toolrun.errors import Problem
    from toolrun.report.models import CheckReport, PlanCheck
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
    help="Policy diff against these settings files (instead of the --settings files); repeatable.",
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
@problems_option
@width_option
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
    strict: bool,
    managed_settings: Path | None,
    compare_config: Path | None,
    compare_settings: tuple[Path, ...],
    shard: Shard | None,
    merge_reports: bool,
    problems: bool,
    width: int | None,
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
    and exits with the one code the unsharded check would give. A shard leaves GitHub
    annotations and the step summary to the merge, which writes each once.

    In a GitHub job (GITHUB_ACTIONS) or with --format github, the config's warnings and
    the problems of the config and of the inputs are ::warning/::error annotations on
    their file and line.
    """
    import toolrun.cli
    from toolrun.cli import logs
    from toolrun.commands.check import CheckRequest
    from toolrun.commands.check import check as run_check

    toolrun.cli.exit_at_once = True  # (a check of 100,000 calls: 0.1 s of freeing them)
    fmt = fmt or ("table" if sys.stdout.isatty() else "text")
    reports = resolve(
        outputs, report_format, "; or use --report-format " + "|".join(REPORT_FORMATS)
    )
    # In CI the config's warnings and problems are annotations on their file and line, but
    # a shard leaves annotations and the step summary to the merge: said once, not N times.
    in_job = os.environ.get("GITHUB_ACTIONS") == "true"
    if shard is None and (fmt == "github" or in_job):
        logs.annotate(annotation_paths())
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

            for line in config_annotations(report.config_notes, annotation_paths()):
                click.echo(line, err=True)
        stream = streamer(fmt, quiet=quiet, verbose=verbose, view=View(problems, width, workspace))
        for plan in report.plans:
            stream(plan)
        return finish(report, fmt, reports, width)
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
    stream = streamer(fmt, quiet=quiet, verbose=verbose, view=View(problems, width, workspace))
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
    toolrun.cli.kept[:] = [report]
    progress.clear()
    return finish(report, fmt, reports, width)


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
    from toolrun.commands.check_inputs import expand_inputs
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
        request, config_file=compare[0], settings_files=compare[1], on_plan=print_problems
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
