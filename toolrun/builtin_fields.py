"""The input fields that name what a built-in call is about.

Stdlib only and outside toolrun.tools (whose package imports pydantic): the CLI and TAB
completion import it.

The first field is a call's main argument: what explain-permission's positional form
fills and what result lines show.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAIN_FIELDS: dict[str, tuple[str, ...]] = {
    "Bash": ("command",),
    "Read": ("file_path",),
    "Write": ("file_path",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "Glob": ("pattern", "path"),
    "Grep": ("pattern", "path"),
    "LS": ("path",),
    "WebFetch": ("url",),
    "ApplyPatch": ("patch",),
}
BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(sorted(MAIN_FIELDS))


def main_field(tool: str) -> str | None:
    """The field holding a built-in call's main argument (None for other tools)."""
    fields = MAIN_FIELDS.get(tool)
    return fields[0] if fields else None


def target_of(tool: str, input: Mapping[str, Any], width: int = 48) -> str:
    """A call's main argument in one line of at most ``width`` (cut with …): what result
    lines, tables and annotations show of a call."""
    key = main_field(tool)
    if tool == "ApplyPatch":  # the patch text itself says nothing in one line
        text = "patch"
    elif key is not None and key in input:
        text = str(input[key])
    else:
        import json  # (only here: the CLI's start-up imports this module)

        text = json.dumps(dict(input), ensure_ascii=False, separators=(",", ":"), default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
