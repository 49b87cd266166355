"""What hooks said for people and for the model: ``systemMessage`` (a warning shown to
the user) and ``additionalContext`` (text Claude Code puts next to the tool result).

Read from a result's JSON hook records (or a journal's), so the text line, the table,
``--verbose`` and ``show`` all say the same; the renderers only place the strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

#: what each field is called where it is shown in full, and in a one-line note
LABELS = (("system_message", "systemMessage"), ("additional_context", "additionalContext"))
_SHORT_LABELS = {"systemMessage": "message", "additionalContext": "context"}
_SHORT = 32


def hook_messages(records: Iterable[Mapping[str, Any]]) -> Iterator[tuple[str, str, str]]:
    """``(label, who, text)`` for each message a hook run gave: ``who`` is
    ``EVENT `command` (source)``; in the order the hooks ran, config order."""
    for record in records:
        for run in record.get("runs") or ():
            for key, label in LABELS:
                text = run.get(key)
                if isinstance(text, str) and text.strip():
                    who = (
                        f"{run.get('event', record.get('event'))} `{run.get('command')}` "
                        f"({run.get('source')})"
                    )
                    yield label, who, text.strip()


def messages_lines(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per message, in full (``--verbose``, ``show``)."""
    return [f"{label} from {who}: {text}" for label, who, text in hook_messages(records)]


def messages_note(records: Iterable[Mapping[str, Any]]) -> str:
    """The messages in a few words for a result's one-line note (text, table, ``runs``):
    ``message: Build is red; context: generated file`` (each cut to fit a table)."""
    parts = []
    for label, _who, text in hook_messages(records):
        flat = " ".join(text.split())
        short = flat if len(flat) <= _SHORT else flat[: _SHORT - 1] + "…"
        parts.append(f"{_SHORT_LABELS[label]}: {short}")
    return "; ".join(parts)
