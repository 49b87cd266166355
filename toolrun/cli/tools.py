"""``toolrun tools``: what can be called, and each tool's input schema."""

from __future__ import annotations

from pathlib import Path

import click

from toolrun.cli.complete import complete_tool
from toolrun.cli.options import config_options


@click.command()
@click.option(
    "--schema",
    "schema_of",
    metavar="NAME",
    shell_complete=complete_tool,
    help="Print the input JSON Schema of one tool instead of the table.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Output format of the list.",
)
@config_options
def tools(
    schema_of: str | None,
    fmt: str,
    config_file: Path | None,
    settings_files: tuple[Path, ...],
    workspace: Path,
    mode: str | None,
) -> int:
    """List the registered tools: kind, concurrency- and retry-safety, source.

    Built-ins, plugins (the toolrun.tools entry points) and the tools of the MCP
    servers the config names (mcpServers).
    """
    import json

    from toolrun.cli.options import load_config_from_options
    from toolrun.commands.tools import describe_tools, tool_registry, tool_schema

    registry = tool_registry(load_config_from_options(config_file, settings_files, workspace, mode))
    if schema_of is not None:
        click.echo(json.dumps(tool_schema(schema_of, registry), indent=2))
        return 0
    rows = describe_tools(registry)
    if fmt == "json":
        click.echo(json.dumps([row.as_json() for row in rows], indent=2))
        return 0
    from toolrun.render.table import render_table

    click.echo(
        render_table(
            ["tool", "kind", "concurrency-safe", "retry-safe", "source"],
            [
                [r.name, r.kind, r.concurrency, "yes" if r.retry_safe else "no", r.source]
                for r in rows
            ],
        )
    )
    return 0
