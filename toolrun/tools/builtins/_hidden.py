"""Results the permission rules keep out of sight (Grep, Glob, LS).

A search or a listing whose root is allowed must still not show a file that a Read
deny (or ask) rule covers: the executor gives tools ``ToolContext.read_veto`` and the
tools drop such paths before formatting, then say how many they dropped, so the
output is never silently incomplete.
"""

from __future__ import annotations

from collections.abc import Callable

#: Whether a path (absolute, as the tool found it) is kept out of the results.
Hide = Callable[[str], bool]


def note(count: int) -> str:
    """``(2 paths hidden by permission rules)``."""
    return f"({count} {'path' if count == 1 else 'paths'} hidden by permission rules)"


def with_note(text: str, count: int) -> str:
    """``text`` with the note on a line of its own when anything was hidden."""
    return f"{text}\n{note(count)}" if count else text
