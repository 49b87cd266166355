"""What a file edit changed, as a unified diff and as Claude Code's ``structuredPatch``
(a list of hunks ``{oldStart, oldLines, newStart, newLines, lines}``, each line starting
with ``' '``, ``'-'`` or ``'+'``; the shape the npm ``diff`` package's ``structuredPatch``
gives and Claude Code's Edit / Write results carry)."""

from __future__ import annotations

from typing import Any

from toolrun.config.sizes import format_size
from toolrun.errors import ToolError
from toolrun.tools.builtins._align import CONTEXT, Change, align
from toolrun.tools.builtins._files import Target, read_text

# Above this a write carries no diff (diffing costs time and the journal holds every result).
MAX_DIFF_BYTES = 1 << 20


def structured_patch(old: str, new: str) -> list[dict[str, Any]]:
    """The hunks that turn ``old`` into ``new``; [] when they are the same."""
    return _hunks(old, new)[0]


def _hunks(old: str, new: str) -> tuple[list[dict[str, Any]], bool]:
    """The hunks, and whether they are the shortest diff (see :mod:`._align`)."""
    found = align(old, new)
    a, b, first = found.window.old_lines, found.window.new_lines, found.window.old_start
    hunks = []
    for group in _groups(found.changes, len(a)):
        lines: list[str] = []
        i1, j1 = max(group[0][0] - CONTEXT, 0), max(group[0][2] - CONTEXT, 0)
        i2 = min(group[-1][1] + CONTEXT, len(a))
        j2 = group[-1][3] + (i2 - group[-1][1])
        at = i1
        for c1, c2, d1, d2 in group:
            lines += [" " + line for line in a[at:c1]]
            lines += ["-" + line for line in a[c1:c2]]
            lines += ["+" + line for line in b[d1:d2]]
            at = c2
        lines += [" " + line for line in a[at:i2]]
        old_lines, new_lines = i2 - i1, j2 - j1
        hunks.append(
            {
                # 1-based; an empty side starts at the line before it (as `diff -u` writes it)
                "oldStart": first + i1 + (1 if old_lines else 0),
                "oldLines": old_lines,
                "newStart": first + j1 + (1 if new_lines else 0),
                "newLines": new_lines,
                "lines": lines,
            }
        )
    return hunks, found.minimal


def _groups(changes: list[Change], old_count: int) -> list[list[Change]]:
    """Changes sharing a hunk: those with at most 2 * CONTEXT equal lines between."""
    groups: list[list[Change]] = []
    for change in changes:
        if groups and change[0] - groups[-1][-1][1] <= 2 * CONTEXT:
            groups[-1].append(change)
        else:
            groups.append([change])
    return groups


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
    """The fields a file edit's result carries: ``structuredPatch`` and ``diff``; or,
    when they cannot be had, ``diff_omitted`` saying why. Never raises: the edit is made
    by then, and its result must say so."""
    try:
        hunks, minimal = _hunks(old, new)
        size = sum(len(line) + 1 for hunk in hunks for line in hunk["lines"])
        if size > MAX_DIFF_BYTES:
            return omitted(f"it is over {format_size(MAX_DIFF_BYTES)}")
        meta: dict[str, Any] = {
            "structuredPatch": hunks,
            "diff": unified_diff(path, hunks, old_path=old_path),
        }
    except MemoryError:
        return omitted("not enough memory to build it")
    if not minimal:
        meta["diff_note"] = (
            "not the shortest diff: too many lines differ to align them in time; "
            "the changed part is shown as one change"
        )
    return meta


def omitted(why: str) -> dict[str, Any]:
    """A result's note that it carries no diff, and why."""
    return {"diff_omitted": why}


def note(output: str, meta: dict[str, Any]) -> str:
    """A file edit's output, with the note when its diff was omitted."""
    why = meta.get("diff_omitted")
    return f"{output}; diff omitted: {why}" if why else output


def previous_text(target: Target) -> str | None:
    """The text a write is about to replace, for its diff; None when it has none to show
    (not UTF-8 text, unreadable, or over MAX_DIFF_BYTES): the write goes on regardless."""
    try:
        if target.path.stat().st_size > MAX_DIFF_BYTES:
            return None
        return read_text(target).text
    except (OSError, ToolError):
        return None


def write_diff(path: str, old: str | None, new: str, *, old_path: str | None = None) -> dict[str, Any]:
    """:func:`diff_metadata` when the old text is known and both are small enough."""
    limit = format_size(MAX_DIFF_BYTES)
    if old is None:
        return omitted(f"the file it replaced is not UTF-8 text, or over {limit}")
    if len(new) > MAX_DIFF_BYTES:
        return omitted(f"the new text is over {limit}")
    return diff_metadata(path, old, new, old_path=old_path)
