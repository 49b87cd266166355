"""What a CI run of Codex writes: ``codex exec --json``, one event a line.

The events and items are those of ``codex-rs/exec/src/exec_events.rs`` (openai/codex):
``thread.started`` ``{thread_id}``, ``turn.started``, ``turn.completed`` ``{usage}``,
``turn.failed``, ``item.started`` / ``item.updated`` / ``item.completed`` ``{item}`` and
``error``. An item is ``{id, type, ...}``; those that are calls:

- ``command_execution`` ``{command, aggregated_output, exit_code, status}``: Bash; the
  command is the argv Codex ran, shell-quoted (``bash -lc SCRIPT`` is SCRIPT);
- ``file_change`` ``{changes: [{path, kind, diff?}], status}``: one call a change, a Write
  for ``add`` (its ``diff`` is the new file's text), an Edit for ``update`` and
  ``delete`` (Edit rules decide a change to a file; the record holds no old text, so a
  replayed Edit changes nothing and says so);
- ``mcp_tool_call`` ``{server, tool, arguments}``: ``mcp__server__tool``;
- ``web_search`` ``{query}``: WebSearch; ``todo_list``: TodoWrite (no permission);
- ``collab_tool_call`` ``{tool}``: decided by that tool's name (it asks).

An item is one call however many of its events there are (started, updated, completed:
the first one read). Calls in flight together form a turn; a call that starts when none is
in flight starts a new one. The stream records no working directory (``--transcript-cwd``
names it).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from toolrun.plan.formats.codex_rollout import script
from toolrun.plan.importers import _Builder, _JsonLines, _kind, _line_object, _Where
from toolrun.yamlfile import PathPart

EVENTS: Final = frozenset(
    {
        "thread.started", "turn.started", "turn.completed", "turn.failed", "item.started",
        "item.updated", "item.completed", "item.plan.delta", "request_user_input", "error",
    }
)  # fmt: skip
_ITEM_EVENTS: Final = frozenset({"item.started", "item.updated", "item.completed"})
_QUIET_ITEMS: Final = frozenset({"agent_message", "reasoning", "plan", "error"})
_CALL_ITEMS: Final = frozenset(
    {"command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list",
     "collab_tool_call"}
)  # fmt: skip


def recognise(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("type")
    if kind == "thread.started":
        return "thread_id" in obj
    return kind in _ITEM_EVENTS and isinstance(obj.get("item"), dict) and "id" in obj["item"]


def load(lines: _JsonLines, builder: _Builder, path: Path) -> None:
    seen: set[str] = set()  # the items read, in this thread
    in_flight: set[str] = set()
    thread = 0
    last = lines.last_line()
    for doc, problem, number in lines:
        data = _line_object(builder, doc, problem, number, last)
        if data is None:
            continue
        assert doc is not None
        where = _Where(doc, number)
        kind = data.get("type")
        if kind not in EVENTS:
            shown = repr(kind) if isinstance(kind, str) else f"({_kind(kind)})"
            builder.skipped(where.value(("type",) if "type" in data else ()),
                            f"unknown event type {shown}")
            continue
        if kind == "thread.started":  # a resumed run in the same file: ids start again
            thread += 1
            seen.clear()
        if kind not in _ITEM_EVENTS:
            if kind in ("turn.started", "turn.completed", "turn.failed"):
                builder.end_turn()
                in_flight.clear()
            continue
        item = data.get("item")
        if not isinstance(item, dict):
            builder.problem(where, ("item",), f"must be an object, not {_kind(item)}")
            continue
        item_id, item_type = item.get("id"), item.get("type")
        if not isinstance(item_id, str) or not item_id:
            builder.problem(where, ("item", "id"), f"must be a non-empty string, not {_kind(item_id)}")
            continue
        if item_type not in _CALL_ITEMS:
            if item_type not in _QUIET_ITEMS:
                shown = repr(item_type) if isinstance(item_type, str) else f"({_kind(item_type)})"
                builder.skipped(where.value(("item", "type")), f"unknown item type {shown}")
            continue
        if kind == "item.completed":
            in_flight.discard(item_id)
        if item_id in seen:
            continue
        seen.add(item_id)
        if not in_flight:
            builder.end_turn()  # nothing else in flight: this call starts a turn
        if kind != "item.completed":
            in_flight.add(item_id)
        call_id = item_id if thread <= 1 else f"{item_id}@{thread}"
        _call(where, builder, item, item_type, call_id)
        if not in_flight:
            builder.end_turn()


def _call(
    where: _Where, builder: _Builder, item: dict[str, Any], item_type: str, call_id: str
) -> None:
    p: tuple[PathPart, ...] = ("item",)
    calls: list[tuple[str, dict[str, Any], tuple[PathPart, ...]]] = []
    if item_type == "command_execution":
        command = item.get("command")
        if not isinstance(command, str) or not command.strip():
            builder.problem(where, (*p, "command"), f"must be a command string, not {_kind(command)}")
            return
        calls.append(("Bash", {"command": _script(command)}, (*p, "command")))
    elif item_type == "file_change":
        changes = item.get("changes")
        if not isinstance(changes, list) or not changes:
            builder.problem(where, (*p, "changes"), f"must be a list of changes, not {_kind(changes)}")
            return
        for n, change in enumerate(changes):
            at = (*p, "changes", n)
            found = _change(where, builder, change, at)
            if found is not None:
                calls.append((*found, at))
    elif item_type == "mcp_tool_call":
        server, tool, args = item.get("server"), item.get("tool"), item.get("arguments")
        for key, value in (("server", server), ("tool", tool)):
            if not isinstance(value, str) or not value:
                builder.problem(where, (*p, key), f"must be a non-empty string, not {_kind(value)}")
                return
        tool_input = args if isinstance(args, dict) else {}
        calls.append((f"mcp__{server}__{tool}", tool_input, (*p, "arguments")))
    elif item_type == "web_search":
        query = item.get("query")
        calls.append(("WebSearch", {"query": query if isinstance(query, str) else ""}, p))
    elif item_type == "todo_list":
        calls.append(("TodoWrite", {"items": item.get("items", [])}, p))
    else:  # collab_tool_call
        tool = item.get("tool")
        calls.append((tool if isinstance(tool, str) and tool else "collab_tool_call", {}, p))
    for n, (tool, tool_input, input_path) in enumerate(calls):
        builder.call(
            where,
            input_path if len(calls) > 1 else p,
            tool=tool,
            tool_path=(*p, "type"),
            tool_input=tool_input,
            input_path=input_path,
            call_id=f"{call_id}.{n + 1}" if n else call_id,
            id_path=(*p, "id"),
        )


def _script(command: str) -> str:
    """The command line Codex ran: its shell-quoted argv, ``bash -lc SCRIPT`` as SCRIPT."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command  # not an argv Codex quoted: decided as it reads
    return script(argv) if len(argv) == 3 else command


def _change(
    where: _Where, builder: _Builder, change: Any, at: tuple[PathPart, ...]
) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(change, dict):
        builder.problem(where, at, f"a change must be an object, not {_kind(change)}")
        return None
    target, kind = change.get("path"), change.get("kind")
    if not isinstance(target, str) or not target:
        builder.problem(where, (*at, "path"), f"must be a non-empty string, not {_kind(target)}")
        return None
    if isinstance(kind, dict):  # the app server's shape: {"type": "update", ...}
        kind = kind.get("type")
    if kind == "add":
        diff = change.get("diff")
        return "Write", {"file_path": target, "content": diff if isinstance(diff, str) else ""}
    if kind in ("update", "delete"):
        return "Edit", {"file_path": target, "old_string": "", "new_string": ""}
    builder.problem(where, (*at, "kind"), f"must be add, update or delete, not {kind!r}")
    return None
