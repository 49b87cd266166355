"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as plans.

Each line is ``{"timestamp", "type", "payload"}``. ``session_meta`` and ``turn_context``
records name the working directory; ``response_item`` records hold the model's tool calls:

- ``function_call`` ``shell`` (``command`` an argv), ``shell_command`` (``command`` a
  string), ``exec_command`` (``cmd`` a string), each with an optional ``workdir``, and
  ``local_shell_call`` (``action.command``, ``action.working_directory``): Bash calls; an
  argv is joined with shell quoting, ``bash -lc SCRIPT`` is SCRIPT, the working directory
  is the call's own cwd;
- ``custom_tool_call`` / ``function_call`` ``apply_patch``: ApplyPatch;
- MCP calls (``mcp__server__tool``, or the older ``server__tool``): ``mcp__server__tool``
  with their arguments, so MCP rules decide them;
- ``update_plan`` is Claude Code's TodoWrite (no permission), ``view_image`` a Read,
  ``web_search_call`` a WebSearch; any other tool keeps its name (and so asks).

Consecutive calls form a turn (a tool output or a message ends it). Unknown record and item
types are skipped with a warning, like a session log's unreadable lines.

Older rollouts (``rollout-*.jsonl`` of 2025's first Codex CLI versions) have no envelope:
a first line ``{"id", "timestamp", "instructions"}``, ``{"record_type": "state"}`` lines
and the response items themselves, one a line; they are read as the same items.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from toolrun.plan.importers import (
    _Builder,
    _JsonLines,
    _kind,
    _line_object,
    _Where,
    decode_arguments,
)
from toolrun.yamlfile import PathPart

RECORDS: Final = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_QUIET_ITEMS: Final = frozenset(
    {
        "message", "reasoning", "function_call_output", "custom_tool_call_output",
        "local_shell_call_output", "ghost_snapshot", "compaction", "compaction_summary",
        "other",
    }
)
_ENDS_TURN: Final = frozenset(
    {"message", "function_call_output", "custom_tool_call_output", "local_shell_call_output"}
)
_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash"})
_SHELL_CALLS: Final = {"shell": "command", "container.exec": "command", "shell_command": "command",
                       "exec_command": "cmd"}


_CALL_ITEMS: Final = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
#: the item types an older rollout writes as records of their own
_LEGACY_ITEMS: Final = _CALL_ITEMS | _QUIET_ITEMS - {"other"}


def is_rollout_line(obj: Mapping[str, Any]) -> bool:
    return obj.get("type") in RECORDS and isinstance(obj.get("payload"), dict)


def _legacy(obj: Mapping[str, Any]) -> str | None:
    """``item``, ``meta`` or ``state`` for a line of an older rollout, else None."""
    if "payload" in obj:
        return None
    kind = obj.get("type")
    if kind in _CALL_ITEMS and ("call_id" in obj or "id" in obj):
        return "item"
    if kind in _LEGACY_ITEMS and kind != "message":
        return "item"
    if kind == "message" and "role" in obj and isinstance(obj.get("content"), list):
        return "item"
    if obj.get("record_type") == "state" and "type" not in obj:
        return "state"
    if "type" not in obj and {"id", "timestamp", "instructions"} <= obj.keys():
        return "meta"
    return None


def recognise(obj: Mapping[str, Any]) -> bool:
    return is_rollout_line(obj) or _legacy(obj) in ("item", "meta")


def load(lines: _JsonLines, builder: _Builder, path: Path) -> None:
    rollout(lines, builder)


def script(argv: list[str]) -> str:
    """The command line an argv runs: ``bash -lc SCRIPT`` is SCRIPT, anything else is the
    argv quoted for the shell."""
    if len(argv) == 3 and posixpath.basename(argv[0]) in _SHELLS and argv[1] in ("-c", "-lc", "-cl"):
        return argv[2]
    return shlex.join(argv)


def rollout(lines: _JsonLines, builder: _Builder) -> None:
    session_cwd: str | None = None
    last = lines.last_line()
    for doc, problem, number in lines:
        data = _line_object(builder, doc, problem, number, last)
        if data is None:
            continue
        assert doc is not None
        where = _Where(doc, number)
        kind = data.get("type")
        payload = data.get("payload")
        legacy = _legacy(data)
        if legacy in ("meta", "state"):
            continue
        if legacy == "item":
            _item(where, builder, data, session_cwd, ())
            continue
        if kind not in RECORDS:
            shown = repr(kind) if isinstance(kind, str) else f"({_kind(kind)})"
            builder.skipped(where.value(("type",)), f"unknown record type {shown}")
            continue
        if not isinstance(payload, dict):
            builder.problem(where, ("payload",), f"must be an object, not {_kind(payload)}")
            continue
        if kind in ("session_meta", "turn_context"):
            cwd = payload.get("cwd")
            if isinstance(cwd, str) and cwd:
                session_cwd = cwd
            if kind == "turn_context":
                builder.end_turn()
            continue
        if kind != "response_item":
            continue
        _item(where, builder, payload, session_cwd, ("payload",))


def _item(
    where: _Where,
    builder: _Builder,
    payload: dict[str, Any],
    cwd: str | None,
    p: tuple[PathPart, ...],
) -> None:
    """One response item (at ``p`` in its record): a call, the end of a turn, or nothing."""
    item = payload.get("type")
    builder.cwd = cwd
    if item in _CALL_ITEMS:
        _call(where, builder, payload, item, cwd, p)
    elif item in _ENDS_TURN:
        builder.end_turn()
    elif item not in _QUIET_ITEMS:
        shown = repr(item) if isinstance(item, str) else f"({_kind(item)})"
        builder.skipped(where.value((*p, "type")), f"unknown response item type {shown}")


def _call(
    where: _Where,
    builder: _Builder,
    payload: dict[str, Any],
    item: str,
    cwd: str | None,
    p: tuple[PathPart, ...],
) -> None:
    call_id = payload.get("call_id", payload.get("id"))
    if call_id is not None and not isinstance(call_id, str):
        builder.problem(where, (*p, "call_id"), f"must be a string, not {_kind(call_id)}")
        return
    name: Any = payload.get("name")
    args_path: tuple[PathPart, ...] = (*p, "arguments")
    tool_input: dict[str, Any] | None
    if item == "local_shell_call":
        action = payload.get("action")
        args_path = (*p, "action")
        if not _expect(builder, where, args_path, action, dict):
            return
        assert isinstance(action, dict)
        tool, tool_input = _shell(where, builder, action, "command", args_path,
                                  action.get("working_directory"), cwd)
    elif item == "web_search_call":
        action = payload.get("action")
        query = action.get("query") if isinstance(action, dict) else None
        tool, tool_input = "WebSearch", {"query": query if isinstance(query, str) else ""}
    elif not isinstance(name, str) or not name:
        if name is None:
            builder.missing(where, p, "name")
        else:
            builder.problem(where, (*p, "name"), f"must be a non-empty string, not {_kind(name)}")
        return
    elif item == "custom_tool_call":
        raw = payload.get("input")
        args_path = (*p, "input")
        if not _expect(builder, where, args_path, raw, str):
            return
        assert isinstance(raw, str)
        tool, tool_input = (("ApplyPatch", {"patch": raw}) if name == "apply_patch"
                            else (name, {"input": raw}))
    else:
        decoded = decode_arguments(where, builder, payload.get("arguments"), args_path)
        if decoded is None:
            return
        tool, tool_input = _function(where, builder, name, decoded, args_path, cwd)
    if tool_input is None:
        return
    builder.call(
        where,
        p,
        tool=tool,
        tool_path=(*p, "name"),
        tool_input=tool_input,
        input_path=args_path,
        call_id=call_id or None,
        id_path=(*p, "call_id"),
    )


def _expect(
    builder: _Builder, where: _Where, path: tuple[PathPart, ...], value: Any, kind: type
) -> bool:
    """Whether ``value`` is a ``kind`` (a problem noted when not)."""
    if isinstance(value, kind):
        return True
    expected = "an object" if kind is dict else "a string"
    builder.problem(where, path, f"must be {expected}, not {_kind(value)}")
    return False


def _function(
    where: _Where,
    builder: _Builder,
    name: str,
    args: dict[str, Any],
    args_path: tuple[PathPart, ...],
    cwd: str | None,
) -> tuple[str, dict[str, Any] | None]:
    if name in _SHELL_CALLS:
        return _shell(where, builder, args, _SHELL_CALLS[name], args_path, args.get("workdir"), cwd)
    if name == "apply_patch":
        patch = args.get("input", args.get("patch"))
        if not isinstance(patch, str):
            builder.problem(where, args_path, "apply_patch needs its patch as the string 'input'")
            return name, None
        return "ApplyPatch", {"patch": patch}
    if name == "update_plan":
        return "TodoWrite", args
    if name == "view_image":
        return "Read", {"file_path": args.get("path")}
    if name.startswith("mcp__"):
        return name, args
    if "__" in name.strip("_"):
        return "mcp__" + name, args  # the older server__tool spelling
    return name, args


def _shell(
    where: _Where,
    builder: _Builder,
    args: Mapping[str, Any],
    key: str,
    args_path: tuple[PathPart, ...],
    workdir: Any,
    cwd: str | None,
) -> tuple[str, dict[str, Any] | None]:
    command = args.get(key)
    if isinstance(command, list) and command and all(isinstance(a, str) for a in command):
        text = script(command)
    elif isinstance(command, str) and command:
        text = command
    else:
        what = "missing" if command is None else f"{_kind(command)}, not a command"
        builder.problem(where, args_path, f"{key}: {what} (an argv list or a command string)")
        return "Bash", None
    if isinstance(workdir, str) and workdir:
        builder.cwd = posixpath.join(cwd, workdir) if cwd and not workdir.startswith("/") else workdir
    return "Bash", {"command": text}
