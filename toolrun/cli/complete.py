"""TAB completion of values: run ids, call ids and tool names.

Completion runs on every TAB, so these read only what they must (file names, and the
first records of one journal) with the standard library: no engine, no pydantic.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
from click.shell_completion import CompletionItem

from toolrun.builtin_fields import BUILTIN_TOOL_NAMES

#: A journal is read for call ids up to this many bytes: TAB must answer at once.
_CALL_SCAN_BYTES = 4 << 20


def _runs_folder(ctx: click.Context) -> Path:
    workspace = ctx.params.get("workspace") or "."
    return Path(workspace) / ".toolrun" / "runs"


def _journals(ctx: click.Context) -> list[Path]:
    """Journals, newest first by file time (what `show last` would mostly pick)."""
    try:
        entries = list(os.scandir(_runs_folder(ctx)))
    except OSError:
        return []
    found = [
        (e.stat().st_mtime, Path(e.path))
        for e in entries
        if e.name.endswith(".jsonl") and e.is_file(follow_symlinks=False)
    ]
    return [path for _, path in sorted(found, reverse=True)]


def complete_run(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """`last` and the workspace's run ids (newest first)."""
    items = [CompletionItem("last", help="the latest run")] if "last".startswith(incomplete) else []
    items += [
        CompletionItem(path.stem) for path in _journals(ctx) if path.stem.startswith(incomplete)
    ]
    return items


def _journal_of(ctx: click.Context, run: str) -> Path | None:
    journals = _journals(ctx)
    if run == "last":
        return journals[0] if journals else None
    exact = [p for p in journals if p.stem == run]
    prefixed = [p for p in journals if p.stem.startswith(run)]
    return exact[0] if exact else (prefixed[0] if len(prefixed) == 1 else None)


def complete_call(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The call ids of the run already typed (``PLAN:ID`` when several plans share one)."""
    run = ctx.params.get("run")
    journal = _journal_of(ctx, run) if isinstance(run, str) else None
    if journal is None:
        return []
    calls: dict[tuple[str, str], str] = {}
    try:
        with journal.open("rb") as stream:
            for line in stream.read(_CALL_SCAN_BYTES).splitlines():
                if b'"started"' not in line:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("event") == "started":
                    key = (str(record.get("plan", "")), str(record.get("id", "")))
                    calls.setdefault(key, str(record.get("tool", "")))
    except OSError:
        return []
    plans = {plan for plan, _ in calls}
    items = []
    for (plan, call_id), tool in calls.items():
        name = call_id if len(plans) <= 1 else f"{plan}:{call_id}"
        if name.startswith(incomplete):
            items.append(CompletionItem(name, help=tool or None))
    return items


def complete_tool(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The built-in tool names (MCP tools need their servers started: not on TAB)."""
    return [CompletionItem(name) for name in BUILTIN_TOOL_NAMES if name.startswith(incomplete)]
