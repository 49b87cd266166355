"""The input fields that name what a built-in call is about.

Stdlib only and outside toolrun.tools (whose package imports pydantic): the CLI and TAB
completion import it.

The first field is a call's main argument: what explain-permission's positional form
fills and what result lines show.
"""

from __future__ import annotations

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
