"""A Claude Code session transcript (``~/.claude/projects/<project>/<session>.jsonl``).

JSONL, one event a line; the ``tool_use`` blocks of assistant events sharing one
``message.id`` form a turn. Sidechain records (a subagent's, ``isSidechain``) are turns of
their own, marked; so are the calls of the subagent logs Claude Code keeps beside the
session (``<session>/subagents/*.jsonl``). Each event names its ``cwd``.

A line is taken for a session's only in the session's shape: a known record type with one
of the keys every session record has (``uuid``, ``sessionId``, ...), or an assistant or
user event holding a message. Any other JSONL with a ``type`` key is not a session.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from toolrun.errors import Location
from toolrun.plan.formats.anthropic_api import tool_use_blocks
from toolrun.plan.importers import _Builder, _JsonLines, _kind, _line_object, _Where
from toolrun.yamlfile import DocumentError, read_text

#: Claude Code session record types that carry no tool call (skipped without a warning).
CLAUDE_CODE_RECORDS: Final = frozenset(
    {
        "user", "system", "summary", "file-history-snapshot", "queue-operation", "progress",
        "attachment", "custom-title", "tag", "agent-name", "last-prompt", "permission-mode",
    }
)  # fmt: skip
#: keys of a session's records (one of them is in every record but the oldest summaries)
_SESSION_KEYS: Final = frozenset(
    {"uuid", "parentUuid", "sessionId", "leafUuid", "isSidechain", "messageId", "cwd"}
)


def recognise(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("type")
    if kind != "assistant" and kind not in CLAUDE_CODE_RECORDS:
        return False
    if not _SESSION_KEYS.isdisjoint(obj):
        return True
    message = obj.get("message")
    return kind in ("assistant", "user") and isinstance(message, dict) and "content" in message


def load(lines: _JsonLines, builder: _Builder, path: Path) -> None:
    events(lines, builder)
    for log, shown in _subagent_logs(path, builder.file):
        _subagent(log, shown, builder)


def _subagent_logs(path: Path, file: str) -> list[tuple[Path, str]]:
    """The logs Claude Code keeps beside a session for its subagents
    (``<session>.jsonl`` -> ``<session>/subagents/*.jsonl``), with their shown names."""
    if path.suffix != ".jsonl":
        return []
    folder = path.with_suffix("") / "subagents"
    try:
        logs = sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file())
    except OSError:
        return []
    base = file.removesuffix(".jsonl")
    return [(log, f"{base}/subagents/{log.name}") for log in logs]


def _subagent(log: Path, shown: str, builder: _Builder) -> None:
    """A subagent's log: its calls are turns of their own, marked with the log's name."""
    try:
        text = read_text(log, shown)
    except DocumentError as exc:
        builder.skipped(exc.problem.location or Location(shown, 1, 1), exc.problem.message)
        return
    main_file = builder.file
    builder.end_turn()
    builder.file = shown
    try:
        events(_JsonLines(text, shown), builder, f"subagent {shown}")
        builder.end_turn()
    finally:
        builder.file = main_file
        builder.mark = ""


def events(
    lines: _JsonLines,
    builder: _Builder,
    mark: str = "",
    *,
    known: frozenset[str] = CLAUDE_CODE_RECORDS,
    stream: bool = False,
) -> None:
    """Assistant events' ``tool_use`` blocks; one ``message.id`` is one turn; sidechain
    records are turns of their own, marked. ``stream``: ``claude -p --output-format
    stream-json`` events (the cwd is the init record's, a subagent's events name the
    Task call they serve in ``parent_tool_use_id``)."""
    current: object = None
    session_cwd: str | None = None
    last = lines.last_line()
    for doc, problem, number in lines:
        data = _line_object(builder, doc, problem, number, last)
        if data is None:
            continue
        assert doc is not None
        kind = data.get("type")
        if kind != "assistant":
            if stream and kind == "system" and data.get("subtype") == "init":
                cwd = data.get("cwd")
                session_cwd = cwd if isinstance(cwd, str) and cwd else None
            if kind not in known:
                shown = repr(kind) if isinstance(kind, str) else f"({_kind(kind)})"
                what = "no record type" if kind is None else f"unknown record type {shown}"
                at = ("type",) if kind is not None else ()
                builder.skipped(_Where(doc, number).value(at), what)
            continue
        if stream:
            parent = data.get("parent_tool_use_id")
            side = isinstance(parent, str) and bool(parent)
        else:
            side = data.get("isSidechain") is True
        builder.mark = mark or ("sidechain" if side else "")
        where = _Where(doc, number)
        message = data.get("message")
        if message is None:
            builder.missing(where, (), "message")
            continue
        if not isinstance(message, dict):
            builder.problem(where, ("message",), f"must be an object, not {_kind(message)}")
            continue
        cwd = session_cwd if stream else data.get("cwd")
        builder.cwd = cwd if isinstance(cwd, str) and cwd else None
        message_id = message.get("id")
        key: object = (
            (builder.mark, message_id) if isinstance(message_id, str) and message_id else object()
        )

        def new_turn(key: object = key) -> None:
            nonlocal current
            if key != current:
                builder.end_turn()
                current = key

        tool_use_blocks(where, builder, message.get("content"), ("message", "content"), new_turn)
