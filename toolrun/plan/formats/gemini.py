"""Gemini CLI sessions (``~/.gemini/tmp/<project_hash>/chats/session-*.json``) as plans.

A session is ``{"sessionId", "projectHash", "startTime", "lastUpdated", "messages": [...]}``;
each ``"type": "gemini"`` message's ``toolCalls`` (``{id, name, args, status, ...}``) form a
turn. Its shell, file and web tools become the Claude Code tools the rules speak of:
``run_shell_command`` Bash (its ``directory``, relative to the project, is the call's cwd),
``read_file`` Read, ``write_file`` Write, ``replace`` Edit, ``list_directory`` LS, ``glob``
Glob, ``search_file_content``/``grep_search`` Grep, ``google_web_search`` WebSearch and
``web_fetch`` WebFetch when its prompt names one URL; ``read_many_files`` is a Read of
each path it names (a Glob of each glob pattern among them and of its ``include``
patterns), ids ``ID``, ``ID.2``, ... Other tools keep their names (and so ask). A session
records no working directory: ``--transcript-cwd`` names it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from toolrun.plan.importers import _Builder, _kind, _Where
from toolrun.yamlfile import Document, PathPart

_URL: Final = re.compile(r"https?://[^\s<>\"'`)\]]+")


_GLOB: Final = frozenset("*?[{")


def recognise(data: Any) -> bool:
    return isinstance(data, dict) and is_session(data)


def load(doc: Document, builder: _Builder, path: Path) -> None:
    session(doc, builder)


def is_session(data: Mapping[str, Any]) -> bool:
    messages = data.get("messages")
    return isinstance(messages, list) and (
        "projectHash" in data
        or any(isinstance(m, dict) and m.get("type") == "gemini" for m in messages)
    )


def _keep(args: Mapping[str, Any], **names: str) -> dict[str, Any]:
    """``args`` renamed (Gemini name -> Claude Code name), only the keys present."""
    return {new: args[old] for old, new in names.items() if old in args}


def _read(args: Mapping[str, Any]) -> dict[str, Any]:
    return _keep(args, absolute_path="file_path", file_path="file_path")


def _web_fetch(args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    prompt = args.get("prompt")
    urls = _URL.findall(prompt) if isinstance(prompt, str) else []
    if len(set(urls)) == 1:
        return "WebFetch", {"url": urls[0], "prompt": prompt}
    return "web_fetch", dict(args)  # no URL or several: decided by name (it asks)


_TOOLS: Final[dict[str, Callable[[Mapping[str, Any]], tuple[str, dict[str, Any]]]]] = {
    "run_shell_command": lambda a: ("Bash", _keep(a, command="command", description="description")),
    "read_file": lambda a: ("Read", _read(a)),
    "write_file": lambda a: ("Write", _keep(a, file_path="file_path", content="content")),
    "replace": lambda a: (
        "Edit", _keep(a, file_path="file_path", old_string="old_string", new_string="new_string")
    ),
    "list_directory": lambda a: ("LS", _keep(a, path="path")),
    "glob": lambda a: ("Glob", _keep(a, pattern="pattern", path="path")),
    "search_file_content": lambda a: ("Grep", _keep(a, pattern="pattern", path="path", include="glob")),
    "grep_search": lambda a: ("Grep", _keep(a, pattern="pattern", path="path", include="glob")),
    "google_web_search": lambda a: ("WebSearch", _keep(a, query="query")),
    "web_fetch": _web_fetch,
    "write_todos": lambda a: ("TodoWrite", dict(a)),
}


def session(doc: Document, builder: _Builder) -> None:
    where = _Where(doc)
    data = doc.data
    messages = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(messages, list):
        builder.problem(where, ("messages",), f"must be a list of messages, not {_kind(messages)}")
        return
    for i, message in enumerate(messages):
        path: tuple[PathPart, ...] = ("messages", i)
        if not isinstance(message, dict):
            builder.problem(where, path, f"a message must be an object, not {_kind(message)}")
            continue
        calls = message.get("toolCalls")
        if message.get("type") != "gemini" or calls is None:
            continue
        if not isinstance(calls, list):
            builder.problem(where, (*path, "toolCalls"), f"must be a list, not {_kind(calls)}")
            continue
        builder.end_turn()
        for k, record in enumerate(calls):
            _tool_call(where, builder, record, (*path, "toolCalls", k))
        builder.end_turn()


def _tool_call(where: _Where, builder: _Builder, record: Any, path: tuple[PathPart, ...]) -> None:
    if not isinstance(record, dict):
        builder.problem(where, path, f"a tool call must be an object, not {_kind(record)}")
        return
    bad = False
    for key, kind, expected in (("name", str, "a string"), ("args", dict, "an object")):
        if key not in record:
            builder.missing(where, path, key)
            bad = True
        elif not isinstance(record[key], kind):
            builder.problem(where, (*path, key), f"must be {expected}, not {_kind(record[key])}")
            bad = True
    call_id = record.get("id")
    if call_id is not None and not isinstance(call_id, str):
        builder.problem(where, (*path, "id"), f"must be a string, not {_kind(call_id)}")
        bad = True
    if bad:
        return
    name: str = record["name"]
    args: dict[str, Any] = record["args"]
    if name == "read_many_files" and _read_many(where, builder, args, path, call_id):
        return
    mapper = _TOOLS.get(name)
    tool, tool_input = mapper(args) if mapper is not None else (name, args)
    directory = args.get("directory") if name == "run_shell_command" else None
    builder.cwd = directory if isinstance(directory, str) and directory else None
    builder.call(
        where,
        path,
        tool=tool,
        tool_path=(*path, "name"),
        tool_input=tool_input,
        input_path=(*path, "args"),
        call_id=call_id or None,
        id_path=(*path, "id"),
    )
    builder.cwd = None


def _read_many(
    where: _Where,
    builder: _Builder,
    args: Mapping[str, Any],
    path: tuple[PathPart, ...],
    call_id: str | None,
) -> bool:
    """``read_many_files`` as a Read of each path (a Glob of each pattern); False when its
    ``paths`` is not a list of strings (then it is decided by its name)."""
    paths = args.get("paths")
    include = args.get("include")
    extra = include if isinstance(include, list) else []
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in (*paths, *extra)):
        return False
    if not paths and not extra:
        return False
    for n, target in enumerate([*paths, *extra]):
        is_glob = not _GLOB.isdisjoint(target) or n >= len(paths)
        tool, tool_input = ("Glob", {"pattern": target}) if is_glob else (
            "Read", {"file_path": target}
        )
        at = ("paths", n) if n < len(paths) else ("include", n - len(paths))
        builder.call(
            where,
            path,
            tool=tool,
            tool_path=(*path, "name"),
            tool_input=tool_input,
            input_path=(*path, "args", *at),
            call_id=(f"{call_id}.{n + 1}" if n else call_id) if call_id else None,
            id_path=(*path, "id"),
        )
    return True
