"""Results the permission rules keep out of sight (Grep, Glob, LS).

A search or a listing whose root is allowed must still not show a file that a Read
deny (or ask) rule covers: the executor gives tools ``ToolContext.read_veto`` and the
tools drop such paths before formatting, then say how many they dropped, so the
output is never silently incomplete.

Nor do they show a path that leads outside the workspace, ``additionalDirectories``
and a folder the call was decided on, whether a symlinked folder, a symlinked file or
a pattern took them there: :func:`hider` checks each path as named and resolved.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from toolrun.tools.base import ToolContext

#: Whether a path (absolute, as the tool found it) is kept out of the results.
Hide = Callable[[str], bool]


def note(count: int) -> str:
    """``(2 paths hidden by permission rules)``."""
    return f"({count} {'path' if count == 1 else 'paths'} hidden by permission rules)"


def with_note(text: str, count: int) -> str:
    """``text`` with the note on a line of its own when anything was hidden."""
    return f"{text}\n{note(count)}" if count else text


def _within(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def hider(ctx: ToolContext, *searched: Path) -> Hide:
    """What a listing or search of ``searched`` must leave out: paths the rules keep from
    being read, and paths outside the boundary (as named or resolved). A searched folder
    outside the boundary widens it only when the permission check decided on that folder
    (a rule or the user approved it)."""
    roots: list[str] = []
    for root in ctx.boundary:
        text = os.path.normpath(root)
        roots.extend((text, os.path.realpath(text)))
    decided = ctx.decided or {}
    for root in searched:
        real = decided.get(str(root))
        if real is not None:
            roots.extend((str(root), real))
    unique = tuple(dict.fromkeys(roots))

    def hide(path: str) -> bool:
        link = os.path.normpath(path)
        if not _within(link, unique) or not _within(os.path.realpath(link), unique):
            return True
        return ctx.hidden(link)

    return hide
