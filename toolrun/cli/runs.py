"""``toolrun runs`` and ``toolrun show``: past runs from the journal."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolrun.cli.complete import complete_call, complete_run

if TYPE_CHECKING:
    from toolrun.commands.runs import RunReader, RunSummary
    from toolrun.execution.journal_read import Record

workspace_option = click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The workspace whose .toolrun/runs/ to read.",
)


@click.group(invoke_without_command=True)
@workspace_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--limit", type=click.IntRange(min=1), default=None, help="Only the N newest runs."
)
@click.pass_context
def runs(ctx: click.Context, workspace: Path, fmt: str, limit: int | None) -> int:
    """List past runs of the workspace, newest first (by start time).

    Each journal is read a line at a time. Lines that are not records toolrun
    wrote are skipped and counted; a torn last line (toolrun killed, disk
    full) is reported. `toolrun runs prune` deletes old journals.
    """
    if ctx.invoked_subcommand is not None:
        return 0
    import json

    from toolrun.commands.runs import list_runs
    from toolrun.render.table import render_table

    records = list_runs(workspace, limit=limit)
    if fmt == "json":
        click.echo(json.dumps([_run_json(r) for r in records], indent=2, ensure_ascii=False))
        return 0
    if not records:
        click.echo("no runs recorded yet")
        return 0
    table = [
        [
            r.run_id,
            _iso(r.started_at),
            ", ".join(r.plans),
            " ".join(f"{n} {s}" for s, n in sorted(r.counts.items())),
            r.note,
        ]
        for r in records
    ]
    click.echo(render_table(["run", "started", "plans", "results", "note"], table))
    return 0


@runs.command()
@workspace_option
@click.option("--keep", type=click.IntRange(min=0), default=None, help="Keep the N newest runs.")
@click.option(
    "--older-than",
    "older_than",
    type=click.FloatRange(min=0),
    default=None,
    metavar="DAYS",
    help="Delete runs that started more than DAYS days ago.",
)
@click.option("--dry-run", is_flag=True, help="List what would be deleted; delete nothing.")
def prune(workspace: Path, keep: int | None, older_than: float | None, dry_run: bool) -> int:
    """Delete old runs (journals and stored outputs): all but the --keep N newest, or
    those older than --older-than DAYS. A run still running is kept; one that crashed
    (no end record, its process gone) goes like the others."""
    import time

    from toolrun.commands.runs import prune_runs

    if (keep is None) == (older_than is None):
        raise click.UsageError("give one of --keep N or --older-than DAYS")
    pruned = prune_runs(
        workspace, keep=keep, older_than_days=older_than, now=time.time(), dry_run=dry_run
    )
    verb = "would delete" if dry_run else "deleted"
    for run_id in pruned.deleted:
        click.echo(f"{verb} {run_id}")
    if pruned.unfinished:
        click.echo(
            f"kept {len(pruned.unfinished)} run(s) with no end record, still running "
            "(its process alive, or a live session's last decision within a day): "
            + ", ".join(pruned.unfinished),
            err=True,
        )
    for run_id, why in pruned.failed:
        click.echo(f"toolrun: cannot delete {run_id}: {why}", err=True)
    click.echo(f"{verb} {len(pruned.deleted)} run(s), kept {pruned.kept}")
    return 1 if pruned.failed else 0


def _iso(ts: float | None) -> str:
    from toolrun.execution.results import utc_iso

    return utc_iso(ts) or ""


def _run_json(r: RunSummary) -> dict[str, Any]:
    return {
        "run_id": r.run_id,
        "started_at": _iso(r.started_at) or None,
        "plans": list(r.plans),
        "summary": dict(r.counts),
        "wall_ms": r.wall_ms,
        "finished": r.finished,
        "interrupted": r.interrupted,
        "running": r.running,
        "unread_lines": r.unread_lines,
        "bad_lines": r.bad_lines,
        "torn": r.torn,
        "unreadable": r.unreadable,
    }


SHOW_HEADERS = ("#", "id", "tool", "status", "decision", "time", "execution", "note")
SHOW_WIDTHS = (4, 12, 8, 11, 8, 9, 41)


@click.command()
@click.argument("run", shell_complete=complete_run)
@click.argument("call", required=False, shell_complete=complete_call)
@click.option(
    "--plan",
    default=None,
    help="Only this plan's calls (its path, file name or stem): picks CALL when several "
    "plans of the run use its id.",
)
@click.option(
    "--full",
    is_flag=True,
    help="Only CALL's whole output, byte for byte: the stored file when the display "
    "was trimmed (checked against its sha256), else the journalled output.",
)
@workspace_option
def show(run: str, call: str | None, plan: str | None, full: bool, workspace: Path) -> int:
    """Show a past run (RUN: its id, a prefix, or `last`), or one call's full output.

    CALL is a call id, an execution id (or prefix), or the call's `#`. Calls that
    started and have no result (toolrun was killed while they ran) are listed
    as `started`: they may have had effects. Outputs longer than the display are
    stored whole in .toolrun/runs/RUN/EXECUTION.out; `--full` writes one to stdout
    (exit 1, naming the file, when it is missing or altered).
    """
    from toolrun.commands.runs import RunReader, find_call, find_run, plan_matches

    reader = RunReader(find_run(workspace, run))
    if full and call is None:
        raise click.UsageError("--full shows one call's output: give RUN and CALL")
    if call is not None:
        found = find_call(reader, call, plan)
        if full:
            _show_full(reader, found)
        else:
            _show_call(found)
        _notes(reader, err=True)
        return 0
    from toolrun.render.table import fixed_row

    plans = [str(p) for p in reader.start.get("plans", [])]
    with_plan = len(plans) > 1
    headers = ("plan", *SHOW_HEADERS) if with_plan else SHOW_HEADERS
    widths = ((max(map(len, plans)),) if with_plan else ()) + SHOW_WIDTHS
    click.echo(f"run {reader.path.stem}: {', '.join(plans)}")
    enforced = enforced_line(reader.end)
    if enforced:
        click.echo(enforced)
    click.echo(fixed_row(headers, widths))
    click.echo(fixed_row(["-" * w for w in widths] + ["----"], widths))
    for record in reader.results():
        if plan_matches(record, plan):
            click.echo(fixed_row(_show_row(record, with_plan), widths))
    for record in reader.running:
        if plan_matches(record, plan):
            row = _show_row({**record, "status": "started"}, with_plan)
            click.echo(fixed_row(row, widths))
    _notes(reader, err=False)
    return 0


def enforced_line(end: Record) -> str:
    """What the run claims of its jails (#25), as its end record says; "" when it makes no
    claim (no call was allowed on toolrun's judgement, or the run did not finish)."""
    enforced = end.get("enforced")
    if enforced is True:
        return "enforced: true — the calls allowed on toolrun's judgement ran in jails"
    if enforced is False:
        why = end.get("enforced_reason") or "no jail could be made"
        return f"enforced: false — the calls allowed on toolrun's judgement ran unjailed: {why}"
    return ""


def _show_row(r: Record, with_plan: bool) -> list[str]:
    took = r.get("duration_ms")
    row = [
        str(r["index"] + 1),
        r["id"],
        str(r.get("tool", "")),
        r["status"],
        str(r.get("decision") or ""),
        f"{took:.0f} ms" if took is not None and r["status"] != "started" else "",
        str(r.get("execution_id", "")),
        _call_note(r),
    ]
    return [str(r.get("plan", "")), *row] if with_plan else row


def _call_note(r: Record) -> str:
    from toolrun.render.results import hooks_note, verify_note

    if r["status"] == "started":
        return "started, no result: it may have had effects"
    notes = [hooks_note(r)] if r.get("hooks") else []
    notes.append(verify_note(r.get("verify") or ()))
    if r.get("stored_record_error"):  # a record stored beside the journal, not read back
        notes.append(str(r["stored_record_error"]))
    if r["status"] not in ("ok", "skipped") and r.get("error"):
        notes.append(" ".join(str(r["error"]).split())[:80])
    return "; ".join(n for n in notes if n)


def _notes(reader: RunReader, *, err: bool) -> None:
    summary = reader.summary
    if summary.running:
        click.echo(
            f"({summary.running} calls had started and have no result: "
            "toolrun stopped while they ran; they may have had effects)",
            err=err,
        )
    if not summary.finished:
        click.echo("(the run did not finish: no end record)", err=err)
    if summary.unread_lines:
        click.echo(f"({summary.unread_lines} lines of stdin were left unread)", err=err)
    if summary.torn:
        click.echo("(the journal's last line is torn: cut off while it was written)", err=err)
    if summary.bad_lines:
        click.echo(f"({summary.bad_lines} lines of the journal are not records; skipped)", err=err)


def _show_call(result: Record) -> None:
    import json

    def js(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    click.echo(f"{result.get('id')}  {result.get('tool')}  {result.get('status')}")
    click.echo(f"plan:      {result.get('plan')}")
    click.echo(f"execution: {result.get('execution_id')}")
    if result.get("status") == "started":
        click.echo("state:     started, no result: it may have had effects")
    if result.get("stored_record_error"):
        click.echo(f"record:    {result['stored_record_error']}")
    if "original_input" in result:
        click.echo(f"input:     {js(result.get('original_input'))}")
        click.echo(f"rewritten: {js(result.get('input'))}")
        hooks = result.get("input_rewritten_by") or []
        who = ", ".join(f"`{h.get('command')}` ({h.get('source')})" for h in hooks)
        click.echo(f"       by: {who or 'a PreToolUse hook'}")
    else:
        click.echo(f"input:     {js(result.get('input'))}")
    by = result.get("decided_by") or {}
    if result.get("decision") is not None:
        click.echo(
            f"decision:  {result.get('decision')} by {by.get('kind')}"
            + (f" {by.get('rule')}" if by.get("rule") else "")
            + (f" ({by.get('source')})" if by.get("source") else "")
        )
    from toolrun.render.results import hooks_lines, verify_lines

    if result.get("runs_in"):
        click.echo(f"runs in:   {result['runs_in']} — {result.get('runs_in_why')}")
    for line in hooks_lines(result.get("hooks") or []):
        click.echo(f"hook:      {line}")
    for line in verify_lines(result.get("verify") or []):
        click.echo(f"verify:    {line}")
    if result.get("error"):
        click.echo(f"error:     {result['error']}")
    stored = stored_output_of(result)
    metadata = result.get("metadata")
    if stored is not None:
        click.echo(f"stored:    {_stored_line(stored)}")
    elif isinstance(metadata, dict) and metadata.get("stored_output_error"):
        click.echo(f"stored:    {metadata['stored_output_error']}")
    click.echo("")
    output = str(result.get("output") or "")
    click.echo(output, nl=not output.endswith("\n"))
    metadata = result.get("metadata")
    diff = metadata.get("diff") if isinstance(metadata, dict) else None
    if isinstance(diff, str) and diff:  # what a file edit changed
        click.echo("")
        click.echo(diff, nl=not diff.endswith("\n"))


def stored_output_of(result: Record) -> object | None:
    """The record of a call's stored whole output, as journalled (unchecked), if any."""
    metadata = result.get("metadata")
    return metadata.get("stored_output") if isinstance(metadata, dict) else None


def _stored_line(stored: object) -> str:
    if not isinstance(stored, dict):
        return "(a record toolrun did not write)"
    line = f"{stored.get('path')} ({stored.get('bytes')} bytes, sha256 {stored.get('sha256')})"
    if stored.get("truncated_at") is not None:
        line += f"; cut at {stored.get('truncated_at')} bytes (toolrun.maxStoredOutput)"
    return line + "; see --full"


def _show_full(reader: RunReader, result: Record) -> None:
    """The call's whole output on stdout, as bytes; what it is not (cut, escaped) on stderr."""
    import sys

    from toolrun.errors import StoredOutputError
    from toolrun.execution.journal import stored_outputs_dir
    from toolrun.stored import StoredOutput, stream_stored

    out = sys.stdout.buffer
    raw = stored_output_of(result)
    metadata = result.get("metadata")
    lost = metadata.get("stored_output_error") if isinstance(metadata, dict) else None
    if raw is None and lost is not None:
        raise StoredOutputError(f"{result.get('execution_id')}: {lost}")
    if result.get("status") == "started":  # toolrun stopped while it ran: nothing was checked
        part = stored_outputs_dir(reader.path) / f"{result.get('execution_id')}.out.part"
        left = f"; what it printed may be in {part} (unchecked)" if part.is_file() else ""
        raise StoredOutputError(
            f"call {result.get('id')} started and has no result: no output was recorded{left}"
        )
    if raw is None:
        # the display was the whole output: the journal holds it (bytes that were not
        # UTF-8 are there as \xNN escapes)
        text = str(result.get("output") or "")
        out.write(text.encode("utf-8", "surrogateescape"))
        out.flush()
        return
    stored = StoredOutput.from_json(raw, str(reader.path))
    stream_stored(stored_outputs_dir(reader.path), stored, out.write)
    out.flush()
    if stored.cap_note is not None:
        click.echo(f"toolrun: {stored.cap_note}", err=True)
