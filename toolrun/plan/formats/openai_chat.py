"""An OpenAI Chat Completions conversation: a list of messages or ``{"messages": [...]}``;
the ``tool_calls`` of each assistant message form a turn, ``function.arguments`` being a
JSON string (the deprecated ``function_call`` too). A tool keeps its name: a conversation
names the functions its program defined."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolrun.plan.formats.anthropic_api import conversation_kind, messages_of, role_of
from toolrun.plan.importers import _Builder, _kind, _Where, decode_arguments
from toolrun.yamlfile import Document, PathPart


def recognise(data: Any) -> bool:
    return conversation_kind(data) == "openai"


def load(doc: Document, builder: _Builder, path: Path) -> None:
    messages, prefix = messages_of(doc, builder, "OpenAI Chat Completions")
    where = _Where(doc)
    for i, message in enumerate(messages):
        message_path = (*prefix, i)
        if role_of(where, builder, message, message_path) != "assistant":
            continue
        builder.end_turn()
        calls = message.get("tool_calls")
        if calls is None and isinstance(message.get("function_call"), dict):
            # the deprecated single function call: no id
            _openai_function(
                where, builder, message["function_call"], (*message_path, "function_call"), None
            )
        elif calls is not None and not isinstance(calls, list):
            builder.problem(where, (*message_path, "tool_calls"), f"must be a list, not {_kind(calls)}")
        for k, tool_call in enumerate(calls or ()):
            call_path = (*message_path, "tool_calls", k)
            if not isinstance(tool_call, dict):
                builder.problem(
                    where, call_path, f"a tool call must be an object, not {_kind(tool_call)}"
                )
                continue
            kind = tool_call.get("type", "function")
            function = tool_call.get("function")
            if kind != "function":
                builder.problem(
                    where,
                    (*call_path, "type"),
                    f"unsupported tool call type {kind!r} (only 'function' calls name a tool)",
                )
                continue
            if not isinstance(function, dict):
                if function is None:
                    builder.missing(where, call_path, "function")
                else:
                    builder.problem(
                        where, (*call_path, "function"), f"must be an object, not {_kind(function)}"
                    )
                continue
            call_id = tool_call.get("id")
            if call_id is not None and not isinstance(call_id, str):
                builder.problem(
                    where, (*call_path, "id"), f"must be a string, not {_kind(call_id)}"
                )
                continue
            _openai_function(where, builder, function, (*call_path, "function"), call_id, call_path)
        builder.end_turn()


def _openai_function(
    where: _Where,
    builder: _Builder,
    function: dict[str, Any],
    path: tuple[PathPart, ...],
    call_id: str | None,
    call_path: tuple[PathPart, ...] | None = None,
) -> None:
    call_path = call_path or path
    name = function.get("name")
    arguments = function.get("arguments", "{}")
    if name is None:
        builder.missing(where, path, "name")
        return
    if not isinstance(name, str):
        builder.problem(where, (*path, "name"), f"must be a string, not {_kind(name)}")
        return
    args_path = (*path, "arguments")
    tool_input = decode_arguments(where, builder, arguments, args_path)
    if tool_input is None:
        return
    builder.call(
        where,
        call_path,
        tool=name,
        tool_path=(*path, "name"),
        tool_input=tool_input,
        input_path=args_path,
        call_id=call_id or None,
        id_path=(*call_path, "id"),
    )
