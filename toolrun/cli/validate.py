"""``toolrun validate``: schema-check plans and the config, run nothing."""

from __future__ import annotations

from pathlib import Path

import click

from toolrun.cli.options import config_options


@click.command()
@click.argument("plans", nargs=-1, required=True, type=click.Path(path_type=Path))
@config_options
def validate(
    plans: tuple[Path, ...],
    config_file: Path | None,
    settings_files: tuple[Path, ...],
    workspace: Path,
    mode: str | None,
) -> int:
    """Check plan files (and the config) without running anything.

    Every problem is listed as FILE:LINE:COL: path: message; the exit code is 3
    when there is any.
    """
    from toolrun.commands.validate import validate_plans

    report = validate_plans(
        plans,
        workspace=workspace,
        config_file=config_file,
        settings_files=settings_files,
        mode=mode,
    )
    for line in report.ok_lines:
        click.echo(line)
    for problem in report.problems:
        click.echo(str(problem), err=True)
    if report.problems:
        click.echo(report.summary, err=True)
    return int(report.exit_code)
