"""OpenAI Responses API items (https://platform.openai.com/docs/api-reference/responses).

A response ``{"object": "response", "output": [...]}``, a request's ``{"input": [...]}``
or a bare list of items. The items that are calls:

- ``function_call`` ``{call_id, name, arguments}``: the function by its name, its
  ``arguments`` a JSON string;
- ``local_shell_call`` ``{call_id, action: {command: [argv], working_directory}}``: Bash,
  the argv joined with shell quoting (``bash -lc SCRIPT`` is SCRIPT), run in its
  ``working_directory``;
- ``shell_call`` ``{call_id, action: {commands: [...]}}``: Bash, the commands one a line;
- ``apply_patch_call`` ``{call_id, operation: {type, path, diff}}``: ApplyPatch, the V4A
  ``diff`` of ``create_file`` / ``update_file`` (or a ``delete_file``) in a patch;
- ``web_search_call``: WebSearch; ``mcp_call`` ``{server_label, name, arguments}``:
  ``mcp__server__name``; ``computer_call``: decided by that name (it asks).

Hosted tools that touch nothing here (file search, code interpreter, image generation)
are not calls. Consecutive calls form a turn; a message or a call's output ends it.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any, Final

from toolrun.plan.formats.codex_rollout import script
from toolrun.plan.importers import _Builder, _kind, _Where, decode_arguments
from toolrun.yamlfile import Document, PathPart

_CALLS: Final = frozenset(
    {"function_call", "local_shell_call", "shell_call", "apply_patch_call", "web_search_call",
     "mcp_call", "computer_call"}
)  # fmt: skip
_HOSTED: Final = frozenset(
    {"file_search_call", "code_interpreter_call", "image_generation_call", "reasoning",
     "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "item_reference",
     "compaction"}
)  # fmt: skip
_OUTPUTS: Final = frozenset(
    {"message", "function_call_output", "local_shell_call_output", "shell_call_output",
     "apply_patch_call_output", "computer_call_output", "custom_tool_call_output"}
)  # fmt: skip
_PATCH_HEADS: Final = {"create_file": "Add File", "update_file": "Update File",
                       "delete_file": "Delete File"}  # fmt: skip


def _items_of(data: Any) -> tuple[list[Any], tuple[PathPart, ...]] | None:
    if isinstance(data, list):
        return data, ()
    if isinstance(data, dict):
        for key in ("output", "input"):
            if isinstance(data.get(key), list):
                return data[key], (key,)
    return None


def recognise(data: Any) -> bool:
    if isinstance(data, dict) and data.get("object") == "response":
        return True
    found = _items_of(data)
    return found is not None and any(
        isinstance(i, dict) and i.get("type") in _CALLS | (_OUTPUTS - {"message"})
        for i in found[0]
    )


def load(doc: Document, builder: _Builder, path: Path) -> None:
    where = _Where(doc)
    found = _items_of(doc.data)
    if found is None:
        builder.problem(where, (), 'a Responses API input is a list of items, {"output": [...]} '
                        'or {"input": [...]}')
        return
    items, prefix = found
    for i, item in enumerate(items):
        at = (*prefix, i)
        if not isinstance(item, dict):
            builder.problem(where, at, f"an item must be an object, not {_kind(item)}")
            continue
        kind = item.get("type")
        if kind in _CALLS:
            _call(where, builder, item, kind, at)
        elif kind in _OUTPUTS or (kind is None and "role" in item):
            builder.end_turn()
        elif kind not in _HOSTED:
            shown = repr(kind) if isinstance(kind, str) else f"({_kind(kind)})"
            builder.skipped(where.value((*at, "type") if kind is not None else at),
                            f"unknown item type {shown}")
    builder.end_turn()


def _call(
    where: _Where, builder: _Builder, item: dict[str, Any], kind: str, at: tuple[PathPart, ...]
) -> None:
    call_id = item.get("call_id", item.get("id"))
    if call_id is not None and not isinstance(call_id, str):
        builder.problem(where, (*at, "call_id"), f"must be a string, not {_kind(call_id)}")
        return
    action = item.get("action")
    args_path: tuple[PathPart, ...] = (*at, "action")
    builder.cwd = None
    tool: str
    tool_input: dict[str, Any] | None
    if kind == "function_call" or kind == "mcp_call":
        name = item.get("name")
        if not isinstance(name, str) or not name:
            builder.problem(where, (*at, "name"), f"must be a non-empty string, not {_kind(name)}")
            return
        args_path = (*at, "arguments")
        tool_input = decode_arguments(where, builder, item.get("arguments", "{}"), args_path)
        if kind == "mcp_call":
            server = item.get("server_label")
            name = f"mcp__{server}__{name}" if isinstance(server, str) and server else name
        tool = name
    elif kind == "local_shell_call":
        argv = action.get("command") if isinstance(action, dict) else None
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            builder.problem(where, args_path, "action.command must be an argv (a list of strings)")
            return
        assert isinstance(action, dict)
        workdir = action.get("working_directory")
        if isinstance(workdir, str) and workdir:
            builder.cwd = posixpath.normpath(workdir) if workdir.startswith("/") else workdir
        tool, tool_input = "Bash", {"command": script(argv)}
    elif kind == "shell_call":
        commands = action.get("commands") if isinstance(action, dict) else None
        if not isinstance(commands, list) or not commands or not all(
            isinstance(c, str) for c in commands
        ):
            builder.problem(where, args_path, "action.commands must be a list of command strings")
            return
        tool, tool_input = "Bash", {"command": "\n".join(commands)}
    elif kind == "apply_patch_call":
        args_path = (*at, "operation")
        tool, tool_input = "ApplyPatch", _patch(where, builder, item.get("operation"), args_path)
    elif kind == "web_search_call":
        query = action.get("query") if isinstance(action, dict) else None
        tool, tool_input = "WebSearch", {"query": query if isinstance(query, str) else ""}
    else:  # computer_call: a computer driven here, decided by that name
        tool, tool_input = kind, dict(action) if isinstance(action, dict) else {}
    if tool_input is None:
        return
    builder.call(
        where,
        at,
        tool=tool,
        tool_path=(*at, "type"),
        tool_input=tool_input,
        input_path=args_path,
        call_id=call_id or None,
        id_path=(*at, "call_id"),
    )
    builder.cwd = None


def _patch(
    where: _Where, builder: _Builder, operation: Any, at: tuple[PathPart, ...]
) -> dict[str, Any] | None:
    """An apply_patch operation as the Codex patch toolrun's ApplyPatch applies."""
    if not isinstance(operation, dict):
        builder.problem(where, at, f"must be an object, not {_kind(operation)}")
        return None
    head = _PATCH_HEADS.get(operation.get("type"))  # type: ignore[arg-type]
    target, diff = operation.get("path"), operation.get("diff", "")
    if head is None:
        builder.problem(where, (*at, "type"), "must be create_file, update_file or delete_file")
        return None
    if not isinstance(target, str) or not target or not isinstance(diff, str):
        builder.problem(where, at, "needs a path and a diff (strings)")
        return None
    body = "" if head == "Delete File" else diff if diff.endswith("\n") or not diff else diff + "\n"
    return {"patch": f"*** Begin Patch\n*** {head}: {target}\n{body}*** End Patch\n"}
