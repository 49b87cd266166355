"""String replacement shared by Edit and MultiEdit."""

from __future__ import annotations

from pathlib import Path

from toolrun.errors import ToolError


def replace(text: str, old: str, new: str, *, replace_all: bool, path: Path) -> tuple[str, int]:
    """``text`` with ``old`` replaced by ``new``, and the number of replacements.

    ``old`` must occur exactly once unless ``replace_all``. Raises :class:`ToolError`
    with a message an agent can act on.
    """
    if old == new:
        raise ToolError("old_string and new_string are identical; there is nothing to change")
    if not old:
        raise ToolError(f"old_string is empty but {path} already has content")
    count = text.count(old)
    if count == 0:
        raise ToolError(f"old_string not found in {path}")
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_string occurs {count} times in {path}; give more context or set replace_all"
        )
    return text.replace(old, new), count
