"""The input fields that name what a built-in call is about.

Stdlib only and outside toolrun.tools (whose package imports pydantic): the CLI and TAB
completion import it.

The first field is a call's main argument: what explain-permission's positional form
fills and what result lines show.
"""

from __future__ import annotations

import os
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


def target_of(
    tool: str, input: Mapping[str, Any], width: int = 48, workspace: Workspace = ()
) -> str:
    """The call's main argument on one line, cut to ``width`` with …; a path inside one of
    the ``workspace`` directories is shown relative to it."""
    key = main_field(tool)
    if tool == "ApplyPatch":  # the patch text itself says nothing in one line
        text = "patch"
    elif key is not None and key in input:
        text = str(input[key])
        if key in PATH_FIELDS:
            text = relative(text, workspace)
    else:
        import json  # (only here: the CLI's start-up imports this module)

        text = json.dumps(dict(input), ensure_ascii=False, separators=(",", ":"), default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


#: the input fields that hold a path (shown relative to the workspace)
PATH_FIELDS = frozenset({"file_path", "path", "notebook_path"})
#: the workspace as given and as resolved: a path under either is shown relative to it
Workspace = tuple[str, ...]


def workspace_dirs(workspace: str | os.PathLike[str] | None) -> Workspace:
    """The spellings of a workspace directory a call's paths may start with."""
    if workspace is None:
        return ()
    given = os.path.abspath(os.path.expanduser(os.fspath(workspace)))
    try:
        real = os.path.realpath(given)
    except (OSError, ValueError):
        real = given
    return tuple(dict.fromkeys((real, given)))


def relative(path: str, workspace: Workspace) -> str:
    """``path`` relative to the first workspace directory it is inside (else as it is)."""
    for root in workspace:
        if path == root:
            return "."
        base = root.rstrip("/") + "/"
        if root and path.startswith(base) and len(path) > len(base):
            return path[len(base) :]
    return path
