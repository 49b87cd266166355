"""What a CI run of Claude Code writes: ``claude -p --output-format stream-json``.

JSONL events (https://docs.anthropic.com/en/docs/claude-code/headless): a ``system``
``init`` record (``cwd``, ``session_id``, ``tools``, ``permissionMode``), then ``assistant``
and ``user`` messages as the API returns them, each line with its ``session_id`` and
``parent_tool_use_id`` (a subagent's, set to the Task call it serves), and a ``result``
record at the end; ``--include-partial-messages`` adds ``stream_event`` lines. The
``tool_use`` blocks of the assistant messages are the calls (one message id one turn),
decided in the init record's ``cwd``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from toolrun.plan.formats.claude_code import events
from toolrun.plan.importers import _Builder, _JsonLines

RECORDS: Final = frozenset({"system", "user", "result", "stream_event"})


def recognise(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("type")
    if kind == "system" and obj.get("subtype") == "init" and "session_id" in obj:
        return True
    return (kind in RECORDS or kind == "assistant") and "session_id" in obj and (
        "parent_tool_use_id" in obj or kind in ("result", "system")
    )


def load(lines: _JsonLines, builder: _Builder, path: Path) -> None:
    events(lines, builder, known=RECORDS, stream=True)
