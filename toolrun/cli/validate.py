"""``toolrun validate``: schema-check plans and the config, run nothing."""

from __future__ import annotations

from pathlib import Path

import click

from toolrun.cli.options import config_options, policy_options


@click.command()
@click.argument("plans", nargs=-1, required=True, type=click.Path(path_type=Path))
@config_options
@policy_options
def validate(
    plans: tuple[Path, ...],
    config_file: Path | None,
    settings_files: tuple[Path, ...],
    workspace: Path,
    mode: str | None,
    strict: bool,
    managed_settings: Path | None,
) -> int:
    """Check plan files (and the config) without running anything.

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
    )
    for line in report.ok_lines:
        click.echo(line)
    for problem in report.problems:
        click.echo(str(problem), err=True)
    if report.problems:
        click.echo(report.summary, err=True)
    return int(report.exit_code)
