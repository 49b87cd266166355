"""LS: the entries of one directory."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from toolrun.errors import ToolError
from toolrun.tools.base import BaseTool, ToolContext, ToolKind, ToolOutput
from toolrun.tools.builtins._blocking import run_blocking
from toolrun.tools.builtins._hidden import Hide, hider, note
from toolrun.tools.inputs import InputSpec, Params, items, pydantic_models, string

MAX_ENTRIES = 1000


@dataclass(frozen=True, slots=True)
class LSParams(Params):
    """A validated LS input (its schema and messages: :class:`LSInput`)."""

    path: str
    ignore: tuple[str, ...] = ()


INPUT = InputSpec(LSParams, "LSInput", path=string, ignore=items(string))


class LSTool(BaseTool[LSParams]):
    name = "LS"
    description = (
        "List a directory: one entry per line, sorted, directories with a trailing slash. "
        "Hidden entries are included."
    )
    kind = ToolKind.READ
    is_retry_safe = True
    concurrency = "always"
    input_spec = INPUT

    def is_concurrency_safe(self, input: LSParams, ctx: ToolContext | None = None) -> bool:
        return True

    def affected_paths(self, input: LSParams, ctx: ToolContext) -> tuple[Path, ...]:
        return (ctx.resolve(input.path),)

    async def run(self, input: LSParams, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(input.path)
        hide = hider(ctx, path)
        return await run_blocking(partial(_list, path, tuple(input.ignore), hide))


def _list(path: Path, ignore: tuple[str, ...], hide: Hide | None = None) -> ToolOutput:
    """The entries of ``path``; those ``hide`` covers are left out (and counted)."""
    if not path.exists():
        raise ToolError(f"{path} does not exist")
    if not path.is_dir():
        raise ToolError(f"{path} is not a directory; use Read for a file")
    entries = [
        entry
        for entry in path.iterdir()
        if not any(fnmatch.fnmatchcase(entry.name, pattern) for pattern in ignore)
    ]
    visible = [e for e in entries if hide is None or not hide(str(e))]
    hidden = len(entries) - len(visible)
    names = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in visible)
    shown = names[:MAX_ENTRIES]
    lines = shown or ([] if hidden else ["(empty directory)"])
    if len(names) > len(shown):
        lines.append(f"... {len(names) - len(shown)} more entries not shown")
    if hidden:
        lines.append(note(hidden))
    return ToolOutput(
        "\n".join(lines),
        metadata={
            "path": str(path),
            "entries": len(names),
            "truncated": len(names) > len(shown),
            "hidden": hidden,
        },
    )


#: the pydantic model (schemas, messages), imported with pydantic on first use
__getattr__ = pydantic_models("LSInput")
