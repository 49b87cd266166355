"""``toolrun runs`` and ``toolrun show``: past runs from the journal."""

from __future__ import annotations

from pathlib import Path

import click

workspace_option = click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The workspace whose .toolrun/runs/ to read.",
)


@click.command()
@workspace_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
def runs(workspace: Path, fmt: str) -> int:
    """List past runs of the workspace, newest first."""
    import json

    from toolrun.commands.runs import list_runs
    from toolrun.execution.results import utc_iso
    from toolrun.render.table import render_table

    records = list_runs(workspace)
    if fmt == "json":
        rows = [
            {
                "run_id": r.run_id,
                "started_at": utc_iso(r.started_at),
                "plans": list(r.plans),
                "summary": dict(r.counts),
                "wall_ms": r.wall_ms,
                "finished": r.wall_ms is not None,
                "interrupted": r.interrupted,
            }
            for r in records
        ]
        click.echo(json.dumps(rows, indent=2))
        return 0
    if not records:
        click.echo("no runs recorded yet")
        return 0
    table = [
        [
            r.run_id,
            utc_iso(r.started_at) or "",
            ", ".join(r.plans),
            " ".join(f"{n} {s}" for s, n in sorted(r.counts.items())),
            "interrupted" if r.interrupted else ("" if r.wall_ms is not None else "incomplete"),
        ]
        for r in records
    ]
    click.echo(render_table(["run", "started", "plans", "results", "note"], table))
    return 0


@click.command()
@click.argument("run")
@click.argument("call", required=False)
@workspace_option
def show(run: str, call: str | None, workspace: Path) -> int:
    """Show a past run (RUN: its id, a prefix, or `last`), or one call's full output.

    CALL is a call id, an execution id (or prefix), or the call's number.
    """
    import json

    from toolrun.commands.runs import find_call, find_run

    record = find_run(workspace, run)
    if call is None:
        from toolrun.render.table import render_table

        rows = [
            [
                r.get("index", 0) + 1,
                r.get("id"),
                r.get("tool"),
                r.get("status"),
                r.get("decision"),
                f"{r.get('duration_ms', 0):.0f} ms",
                r.get("execution_id"),
            ]
            for r in record.results
        ]
        click.echo(f"run {record.run_id}: {', '.join(record.plans)}")
        click.echo(
            render_table(["#", "id", "tool", "status", "decision", "time", "execution"], rows)
        )
        if record.wall_ms is None:
            click.echo("(the run did not finish: no end record)")
        return 0
    result = find_call(record, call)
    click.echo(f"{result.get('id')}  {result.get('tool')}  {result.get('status')}")
    click.echo(f"execution: {result.get('execution_id')}")
    click.echo(f"input:     {json.dumps(result.get('input'), ensure_ascii=False)}")
    by = result.get("decided_by") or {}
    click.echo(
        f"decision:  {result.get('decision')} by {by.get('kind')}"
        + (f" {by.get('rule')}" if by.get("rule") else "")
        + (f" ({by.get('source')})" if by.get("source") else "")
    )
    if result.get("error"):
        click.echo(f"error:     {result['error']}")
    click.echo("")
    click.echo(result.get("output") or "", nl=not str(result.get("output") or "").endswith("\n"))
    return 0
