"""One chat message a line: ccusage's ``chat.jsonl`` and the conversations other tools
export the same way (an Anthropic Messages API message a line, ``{"role", "content"}``,
or a message under ``"message"`` as a Claude Code record holds it, with no record type).

The ``tool_use`` blocks of each assistant message form a turn, read as an Anthropic
conversation's are (the API's own tools become toolrun's); an OpenAI message's
``tool_calls`` are read as a Chat Completions conversation's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolrun.plan.formats.anthropic_api import tool_use_blocks
from toolrun.plan.importers import _Builder, _JsonLines, _line_object, _Where
from toolrun.yamlfile import PathPart


def _message(obj: Mapping[str, Any]) -> tuple[Any, tuple[PathPart, ...]]:
    inner = obj.get("message")
    if isinstance(inner, dict) and "role" in inner:
        return inner, ("message",)
    return obj, ()


def recognise(obj: Mapping[str, Any]) -> bool:
    if "type" in obj and "message" not in obj:
        return False
    message, _ = _message(obj)
    return isinstance(message, dict) and isinstance(message.get("role"), str) and (
        "content" in message or "tool_calls" in message
    )


def load(lines: _JsonLines, builder: _Builder, path: Path) -> None:
    from toolrun.plan.formats.openai_chat import _openai_function

    last = lines.last_line()
    for doc, problem, number in lines:
        data = _line_object(builder, doc, problem, number, last)
        if data is None:
            continue
        assert doc is not None
        message, at = _message(data)
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        where = _Where(doc, number)
        builder.end_turn()
        tool_use_blocks(where, builder, message.get("content"), (*at, "content"), api_tools=True)
        calls = message.get("tool_calls")
        for k, tool_call in enumerate(calls if isinstance(calls, list) else ()):
            function = tool_call.get("function") if isinstance(tool_call, dict) else None
            if not isinstance(function, dict):
                builder.problem(where, (*at, "tool_calls", k), "a tool call needs its function")
                continue
            call_id = tool_call.get("id")
            call_path = (*at, "tool_calls", k)
            _openai_function(
                where, builder, function, (*call_path, "function"),
                call_id if isinstance(call_id, str) else None, call_path,
            )
        builder.end_turn()
