"""What a file edit changed, as a unified diff and as Claude Code's ``structuredPatch``
(a list of hunks ``{oldStart, oldLines, newStart, newLines, lines}``, each line starting
with ``' '``, ``'-'`` or ``'+'``; the shape the npm ``diff`` package's ``structuredPatch``
gives and Claude Code's Edit / Write results carry)."""

from __future__ import annotations

import difflib
from typing import Any

from toolrun.errors import ToolError
from toolrun.tools.builtins._files import Target, read_text

CONTEXT = 3  # lines of context around each change, as `diff -u` and Claude Code use
# Above this a write carries no diff (diffing costs time and the journal holds every result).
MAX_DIFF_BYTES = 1 << 20


def structured_patch(old: str, new: str) -> list[dict[str, Any]]:
    """The hunks that turn ``old`` into ``new``; [] when they are the same."""
    a, b = old.splitlines(), new.splitlines()
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(CONTEXT):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in a[i1:i2]]
                continue
            lines += ["-" + line for line in a[i1:i2]]
            lines += ["+" + line for line in b[j1:j2]]
        first, last = group[0], group[-1]
        old_lines, new_lines = last[2] - first[1], last[4] - first[3]
        hunks.append(
            {
                # 1-based; an empty side starts at the line before it (as `diff -u` writes it)
                "oldStart": first[1] + (1 if old_lines else 0),
                "oldLines": old_lines,
                "newStart": first[3] + (1 if new_lines else 0),
                "newLines": new_lines,
                "lines": lines,
            }
        )
    return hunks


def unified_diff(path: str, hunks: list[dict[str, Any]], *, old_path: str | None = None) -> str:
    """``--- a/PATH`` / ``+++ b/PATH`` and the hunks, as `diff -u` prints them ('' for none)."""
    if not hunks:
        return ""
    out = [f"--- {old_path or path}", f"+++ {path}"]
    for h in hunks:
        out.append(
            f"@@ -{_range(h['oldStart'], h['oldLines'])} +{_range(h['newStart'], h['newLines'])} @@"
        )
        out += h["lines"]
    return "\n".join(out) + "\n"


def _range(start: int, length: int) -> str:
    return str(start) if length == 1 else f"{start},{length}"


def diff_metadata(path: str, old: str, new: str, *, old_path: str | None = None) -> dict[str, Any]:
    """The fields a file edit's result carries: ``structuredPatch`` and ``diff``."""
    hunks = structured_patch(old, new)
    return {"structuredPatch": hunks, "diff": unified_diff(path, hunks, old_path=old_path)}


def previous_text(target: Target) -> str | None:
    """The text a write is about to replace, for its diff; None when it has none to show
    (not UTF-8 text, unreadable, or over MAX_DIFF_BYTES): the write goes on regardless."""
    try:
        if target.path.stat().st_size > MAX_DIFF_BYTES:
            return None
        return read_text(target).text
    except (OSError, ToolError):
        return None


def write_diff(path: str, old: str | None, new: str) -> dict[str, Any]:
    """:func:`diff_metadata` when the old text is known and both are small enough."""
    if old is None or len(new) > MAX_DIFF_BYTES:
        return {}
    return diff_metadata(path, old, new)
