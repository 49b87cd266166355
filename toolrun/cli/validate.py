"""``toolrun validate``: schema-check plans and the config, run nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolrun.cli.options import (
    config_options,
    input_options,
    policy_options,
    text_or_json_option,
)

if TYPE_CHECKING:
    from toolrun.commands.validate import ValidateReport


@click.command()
@click.argument("plans", nargs=-1, required=True, type=click.Path(path_type=Path))
@config_options
@input_options
@policy_options
@text_or_json_option(
    "json: one object with every file, every problem (file, line, column) and the exit code."
)
def validate(
    plans: tuple[Path, ...],
    config_file: Path | None,
    settings_files: tuple[Path, ...],
    workspace: Path,
    mode: str | None,
    source_format: str | None,
    transcript_cwd: str | None,
    allow_empty: bool,
    strict: bool,
    managed_settings: Path | None,
    fmt: str,
) -> int:
    """Check plan files (and the config) without running anything.

    A PLAN may be any input `toolrun check` reads, detected or named with --from; one
    that yields no call is a problem unless --allow-empty.

    Every problem is listed as FILE:LINE:COL: path: message; the exit code is 3
    when there is any. Config keys toolrun does not know are warnings with a "did
    you mean" hint (errors with --strict); Claude Code keys it does not enforce are
    listed once as "ignored: ...".
    """
    from toolrun.commands.validate import validate_plans

    report = validate_plans(
        plans,
        workspace=workspace,
        config_file=config_file,
        settings_files=settings_files,
        mode=mode,
        strict=strict,
        managed_settings=managed_settings,
        source_format=source_format,
        allow_empty=allow_empty,
    )
    if fmt == "json":
        click.echo(json.dumps(_json(report), indent=2, ensure_ascii=False))
        return int(report.exit_code)
    for line in report.ok_lines:
        click.echo(line)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    if report.sources:  # the config was read: from where (nothing to say without one)
        from toolrun.cli.options import sources_line

        click.echo(sources_line(report.sources))
    for problem in report.problems:
        click.echo(str(problem), err=True)
    if report.problems:
        click.echo(report.summary, err=True)
    return int(report.exit_code)


def _json(report: ValidateReport) -> dict[str, Any]:
    from toolrun.errors import problem_json

    return {
        "valid": not report.problems,
        "files": [
            {"file": file, "valid": turns is not None, "turns": turns, "calls": calls}
            for file, turns, calls in report.files
        ],
        "sources": list(report.sources),
        "problems": [problem_json(p) for p in report.problems],
        "warnings": [problem_json(p) for p in report.warnings],
        "summary": report.summary if report.problems else "no problems",
        "exit_code": int(report.exit_code),
    }
