"""An Anthropic Messages API conversation: a list of messages or ``{"messages": [...]}``.

The ``tool_use`` blocks ``{id, name, input}`` of each assistant message form a turn, and
so do its ``server_tool_use`` blocks (the tools Anthropic runs: ``web_fetch``,
``web_search``). The API's own client tools become the tools the rules speak of
(https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/):

- ``bash`` (``bash_20250124``, ``bash_20241022``): Bash with its ``command``; a
  ``restart`` runs nothing and is skipped with a warning;
- the text editor, ``str_replace_based_edit_tool`` (``text_editor_20250728``,
  ``text_editor_20250429``) or ``str_replace_editor`` (``text_editor_20250124``,
  ``text_editor_20241022``): ``view`` Read (``view_range`` as offset and limit),
  ``create`` Write, ``str_replace`` Edit; ``insert`` and ``undo_edit`` change the file
  too, so they are Edits (Edit rules decide them; replayed, toolrun's Edit cannot insert
  at a line and says so);
- ``web_fetch`` WebFetch, ``web_search`` WebSearch.

Any other tool keeps its name (and so asks unless a rule names it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from toolrun.plan.importers import _Builder, _kind, _Where
from toolrun.yamlfile import Document, PathPart

# Roles that only OpenAI's Chat Completions uses (Anthropic's system prompt is a parameter).
_OPENAI_ROLES: Final = frozenset({"system", "developer", "tool", "function"})
_ANTHROPIC_BLOCKS: Final = frozenset(
    {
        "tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
        "web_search_tool_result", "web_fetch_tool_result",
    }
)  # fmt: skip
_CALL_BLOCKS: Final = frozenset({"tool_use", "server_tool_use"})
EDITORS: Final = frozenset({"str_replace_based_edit_tool", "str_replace_editor"})


def conversation_kind(data: Any) -> str | None:
    """``anthropic`` or ``openai`` for a conversation (a list of messages or
    ``{"messages": [...]}``), None for anything else."""
    messages = data.get("messages") if isinstance(data, dict) else data
    if not isinstance(messages, list):
        return None
    anthropic = False
    for message in messages:
        if not isinstance(message, dict):
            continue
        if "tool_calls" in message or "function_call" in message:
            return "openai"
        if message.get("role") in _OPENAI_ROLES:
            return "openai"
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in _ANTHROPIC_BLOCKS for b in content
        ):
            anthropic = True
    if (
        anthropic
        or isinstance(data, list)
        or any(isinstance(m, dict) and "role" in m for m in messages)
    ):
        return "anthropic"  # a list is a conversation; without tool calls either shape fits
    return None


def recognise(data: Any) -> bool:
    return conversation_kind(data) == "anthropic"


def load(doc: Document, builder: _Builder, path: Path) -> None:
    messages, prefix = messages_of(doc, builder, "Anthropic Messages API")
    where = _Where(doc)
    for i, message in enumerate(messages):
        message_path = (*prefix, i)
        if role_of(where, builder, message, message_path) != "assistant":
            continue
        builder.end_turn()
        tool_use_blocks(
            where, builder, message.get("content"), (*message_path, "content"), api_tools=True
        )
        builder.end_turn()


def messages_of(
    doc: Document, builder: _Builder, what: str
) -> tuple[list[Any], tuple[PathPart, ...]]:
    """The message list of a conversation and its path: the document, or its ``messages``."""
    data = doc.data
    where = _Where(doc)
    if isinstance(data, list):
        return data, ()
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return data["messages"], ("messages",)
    if isinstance(data, dict) and "messages" in data:
        builder.problem(
            where, ("messages",), f"must be a list of messages, not {_kind(data['messages'])}"
        )
    else:
        builder.problem(
            where, (), f'an {what} conversation is a list of messages or {{"messages": [...]}}'
        )
    return [], ()


def role_of(
    where: _Where, builder: _Builder, message: Any, path: tuple[PathPart, ...]
) -> str | None:
    if not isinstance(message, dict):
        builder.problem(where, path, f"a message must be an object, not {_kind(message)}")
        return None
    role = message.get("role")
    if not isinstance(role, str):
        if role is None:
            builder.missing(where, path, "role")
        else:
            builder.problem(where, (*path, "role"), f"must be a string, not {_kind(role)}")
        return None
    return role


def tool_use_blocks(
    where: _Where,
    builder: _Builder,
    content: Any,
    path: tuple[PathPart, ...],
    turn_start: Callable[[], None] | None = None,
    *,
    api_tools: bool = False,
) -> None:
    """The ``tool_use`` (and ``server_tool_use``) blocks of an assistant message's content,
    as calls; ``api_tools``: the API's own tools become toolrun's (see the module)."""
    if isinstance(content, str) or content is None:
        return
    if not isinstance(content, list):
        builder.problem(
            where, path, f"must be a string or a list of content blocks, not {_kind(content)}"
        )
        return
    for j, block in enumerate(content):
        block_path = (*path, j)
        if not isinstance(block, dict):
            builder.problem(
                where, block_path, f"a content block must be an object, not {_kind(block)}"
            )
            continue
        if block.get("type") not in _CALL_BLOCKS:
            continue
        if turn_start is not None:
            turn_start()
            turn_start = None
        bad = False
        for key, kind in (("id", str), ("name", str), ("input", dict)):
            if key not in block:
                builder.missing(where, block_path, key)
                bad = True
            elif not isinstance(block[key], kind):
                expected = "an object" if kind is dict else "a string"
                builder.problem(
                    where, (*block_path, key), f"must be {expected}, not {_kind(block[key])}"
                )
                bad = True
        if bad:
            continue
        tool, tool_input = block["name"], block["input"]
        if api_tools:
            mapped = api_tool(tool, tool_input)
            if mapped is None:
                builder.skipped(
                    where.value((*block_path, "input")),
                    f"{tool} restart: it restarts the tool's shell and runs no command",
                )
                continue
            tool, tool_input = mapped
        builder.call(
            where,
            block_path,
            tool=tool,
            tool_path=(*block_path, "name"),
            tool_input=tool_input,
            input_path=(*block_path, "input"),
            call_id=block["id"] or None,
            id_path=(*block_path, "id"),
        )


def api_tool(name: str, args: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The toolrun tool and input of one of the Messages API's own tools (unchanged for any
    other tool); None for a bash ``restart``, which runs nothing."""
    if name == "bash":
        if "command" not in args and args.get("restart") is True:
            return None
        # the input as the tool takes it: a restart flag beside a command is the tool's
        # own business, any other key is kept (and refused by Bash's input, as by the API)
        return "Bash", {k: v for k, v in args.items() if k != "restart"}
    if name in EDITORS:
        return _editor(name, args)
    if name == "web_fetch" and "url" in args:
        return "WebFetch", {"url": args["url"]}
    if name == "web_search" and "query" in args:
        return "WebSearch", {"query": args["query"]}
    return name, dict(args)


def _editor(name: str, args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    command, target = args.get("command"), args.get("path")
    if command == "view":
        out: dict[str, Any] = {"file_path": target}
        span = args.get("view_range")
        if isinstance(span, list) and len(span) == 2 and all(type(n) is int for n in span):
            first, last = span
            out["offset"] = first
            if last != -1:  # -1: to the end of the file
                out["limit"] = max(1, last - first + 1)
        return "Read", out
    if command == "create":
        return "Write", {"file_path": target, "content": args.get("file_text")}
    if command == "str_replace":
        new = args.get("new_str")
        return "Edit", {
            "file_path": target,
            "old_string": args.get("old_str"),
            "new_string": "" if new is None else new,
        }
    if command == "insert":
        text = args.get("insert_text", args.get("new_str"))
        return "Edit", {"file_path": target, "old_string": "", "new_string": text}
    if command == "undo_edit":
        return "Edit", {"file_path": target, "old_string": "", "new_string": ""}
    return name, dict(args)  # an unknown command: decided by the tool's name
