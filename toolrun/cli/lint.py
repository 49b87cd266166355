"""``toolrun lint``: permission rules that do not do what they seem to."""

from __future__ import annotations

from pathlib import Path

import click

from toolrun.cli.options import config_options, policy_options, text_or_json_option


@click.command()
@config_options
@policy_options
@click.option(
    "--plans",
    "plans",
    metavar="GLOB",
    multiple=True,
    help="Plans or transcripts (files or quoted globs; repeatable): also report the rules "
    "no call of them was decided by.",
)
@text_or_json_option("Output format.")
def lint(
    config_file: Path | None,
    settings_files: tuple[Path, ...],
    workspace: Path,
    mode: str | None,
    strict: bool,
    managed_settings: Path | None,
    plans: tuple[str, ...],
    fmt: str,
) -> int:
    """Find permission rules that never decide anything or are easy to evade.

    Each finding is FILE:LINE: KIND: RULE: why. Kinds: shadowed (an allow or ask
    rule an earlier-deciding deny or ask rule covers whole), duplicate (the same
    rule again, in any source), never-matches (a rule Claude Code skips, e.g. a path
    rule on Write or Glob), argument-deny (a Bash deny or ask rule on options or
    operands: easy to evade; the rule on the command and its sub-command is suggested),
    outside-workspace (an allow rule for paths beyond the workspace) and, with
    --plans, unused (no call of the plans was decided by the rule).

    Exit codes: 0 no findings; 1 findings; 3 the config (or a plan) is invalid.
    """
    from toolrun.config import load_config
    from toolrun.policy import lint as policy_lint

    config = load_config(
        workspace=workspace,
        config_file=config_file,
        settings_files=settings_files,
        mode=mode,
        strict=strict,
        managed_settings=managed_settings,
    )
    findings = policy_lint.lint_rules(config)
    if plans:
        from toolrun.commands.check import CheckRequest, check
        from toolrun.errors import ExitCode

        report = check(
            CheckRequest(
                inputs=plans,
                workspace=workspace,
                config_file=config_file,
                settings_files=settings_files,
                mode=mode,
                hooks=False,
                fail_on="never",
                strict=strict,
                managed_settings=managed_settings,
            )
        )
        for problem in report.problems:
            click.echo(str(problem), err=True)
        if report.exit_code is ExitCode.INVALID:
            return int(ExitCode.INVALID)
        hits = ((call.rule, call.source) for _, call in report.calls)
        findings += policy_lint.unused_rules(config, hits)
    if fmt == "json":
        click.echo(policy_lint.json_text(findings))
    else:
        for line in policy_lint.text_lines(findings):
            click.echo(line)
    return 1 if findings else 0
