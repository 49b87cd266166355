"""``toolrun schema``: JSON Schema of plan and config files, for editors."""

from __future__ import annotations

import click


@click.command()
@click.argument("what", type=click.Choice(["plan", "config"]))
def schema(what: str) -> int:
    """Print the JSON Schema of a plan file or a config file.

    Point yaml-language-server at it with a first line such as
    `# yaml-language-server: $schema=plan.schema.json`.
    """
    import json

    from toolrun.commands.schema import config_schema, plan_schema

    click.echo(json.dumps(plan_schema() if what == "plan" else config_schema(), indent=2))
    return 0
