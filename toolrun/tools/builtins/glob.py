"""Glob: files matching a pattern, newest first."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from toolrun.errors import ToolError
from toolrun.tools.base import BaseTool, ToolContext, ToolKind, ToolOutput
from toolrun.tools.builtins._blocking import run_blocking
from toolrun.tools.builtins._hidden import Hide, hider, with_note
from toolrun.tools.inputs import InputSpec, Params, optional, pydantic_models, string

MAX_RESULTS = 100


@dataclass(frozen=True, slots=True)
class GlobParams(Params):
    """A validated Glob input (its schema and messages: :class:`GlobInput`)."""

    pattern: str
    path: str | None = None


INPUT = InputSpec(GlobParams, "GlobInput", pattern=string, path=optional(string))


class GlobTool(BaseTool[GlobParams]):
    name = "Glob"
    description = (
        "Find files by name pattern ('**' spans folders). Paths come newest first "
        f"(by modification time), at most {MAX_RESULTS}."
    )
    kind = ToolKind.READ
    is_retry_safe = True
    concurrency = "always"
    input_spec = INPUT

    def is_concurrency_safe(self, input: GlobParams, ctx: ToolContext | None = None) -> bool:
        return True

    def affected_paths(self, input: GlobParams, ctx: ToolContext) -> tuple[Path, ...]:
        return (_root(input, ctx),)

    async def run(self, input: GlobParams, ctx: ToolContext) -> ToolOutput:
        root = _root(input, ctx)
        base, relative = _split(root, input.pattern, ctx)
        hide = hider(ctx, root, base)
        return await run_blocking(partial(_glob, root, input.pattern, hide, (base, relative)))


def _root(input: GlobParams, ctx: ToolContext) -> Path:
    return ctx.resolve(input.path) if input.path else ctx.workspace


def _split(root: Path, pattern: str, ctx: ToolContext | None = None) -> tuple[Path, str]:
    """The folder to walk and the pattern below it: the permission engine's own split."""
    from toolrun.permissions.paths import glob_base

    home = ctx.home if ctx is not None and ctx.home is not None else os.path.expanduser("~")
    directory, rest = glob_base(pattern, root=str(root), home=home)
    return Path(directory), rest


def _glob(
    root: Path, pattern: str, hide: Hide | None = None, split: tuple[Path, str] | None = None
) -> ToolOutput:
    """Files matching ``pattern``, newest first; those ``hide`` covers are left out."""
    if not root.is_dir():
        what = "is not a directory" if root.exists() else "does not exist"
        raise ToolError(f"{root} {what}")
    base, relative = split if split is not None else _split(root, pattern)
    found: list[tuple[float, str]] = []
    hidden = 0
    try:
        matches = list(base.glob(relative)) if relative else [base]
    except (ValueError, NotImplementedError) as e:
        raise ToolError(f"invalid glob pattern {pattern!r}: {e}") from None
    for match in matches:
        try:
            st = match.stat()
        except OSError:  # vanished, or a dangling symlink
            continue
        if stat.S_ISDIR(st.st_mode):
            continue
        path = os.path.normpath(match)
        if hide is not None and hide(path):
            hidden += 1
            continue
        found.append((-st.st_mtime, path))
    found.sort()
    paths = [p for _, p in found[:MAX_RESULTS]]
    truncated = len(found) > MAX_RESULTS
    lines = paths or ["No files found"]
    if truncated:
        lines.append(
            f"(showing the {MAX_RESULTS} newest of {len(found)} files; narrow the pattern or path)"
        )
    return ToolOutput(
        with_note("\n".join(lines), hidden),
        metadata={
            "root": str(root),
            "count": len(found),
            "truncated": truncated,
            "hidden": hidden,
        },
    )


#: the pydantic model (schemas, messages), imported with pydantic on first use
__getattr__ = pydantic_models("GlobInput")
