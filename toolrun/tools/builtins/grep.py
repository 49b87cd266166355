"""Grep: search file contents with a regex (ripgrep when installed, pure Python otherwise)."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import anyio.to_thread
from pydantic import Field

from toolrun.errors import ToolError
from toolrun.tools.base import BaseTool, ToolContext, ToolInput, ToolKind, ToolOutput
from toolrun.tools.builtins import _grep_py, _grep_rg
from toolrun.tools.builtins._grep_core import OutputMode, Query, check_pattern, format_hits
from toolrun.tools.builtins._hidden import hider, with_note


class GrepInput(ToolInput):
    pattern: str = Field(description="The regular expression to search for.")
    path: str | None = Field(
        default=None, description="The file or folder to search (default: the workspace)."
    )
    glob: str | None = Field(
        default=None,
        description="Only files matching this glob, e.g. '*.py' or '*.{ts,tsx}' (rg --glob).",
    )
    type: str | None = Field(
        default=None, description="Only files of this type, e.g. 'py', 'js', 'rust' (rg --type)."
    )
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description=(
            "'content': matching lines; 'files_with_matches': paths only; "
            "'count': matching lines per file."
        ),
    )
    case_insensitive: bool = Field(default=False, alias="-i", description="Ignore case.")
    line_numbers: bool = Field(
        default=True, alias="-n", description="Show line numbers (content mode)."
    )
    after: int | None = Field(
        default=None, ge=0, alias="-A", description="Lines of context after each match."
    )
    before: int | None = Field(
        default=None, ge=0, alias="-B", description="Lines of context before each match."
    )
    context: int | None = Field(
        default=None, ge=0, alias="-C", description="Lines of context before and after."
    )
    head_limit: int | None = Field(
        default=None, ge=0, description="Keep only the first N output lines (0: no limit)."
    )
    multiline: bool = Field(
        default=False,
        description="Let the pattern span lines ('.' also matches a newline).",
    )


class GrepTool(BaseTool[GrepInput]):
    name = "Grep"
    description = (
        "Search file contents with a regular expression. Skips hidden and .gitignore'd "
        "files like ripgrep; paths are sorted."
    )
    kind = ToolKind.READ
    is_retry_safe = True
    concurrency = "always"
    input_model = GrepInput

    def __init__(self, *, use_ripgrep: bool = True) -> None:
        self.use_ripgrep = use_ripgrep

    def is_concurrency_safe(self, input: GrepInput, ctx: ToolContext | None = None) -> bool:
        return True

    def affected_paths(self, input: GrepInput, ctx: ToolContext) -> tuple[Path, ...]:
        return (_root(input, ctx),)

    async def run(self, input: GrepInput, ctx: ToolContext) -> ToolOutput:
        root = _root(input, ctx)
        root_is_dir = _check_root(root)
        check_pattern(input.pattern, input.multiline)
        content = input.output_mode == "content"
        query = Query(
            pattern=input.pattern,
            root=str(root),
            root_is_dir=root_is_dir,
            glob=input.glob,
            file_type=input.type,
            ignore_case=input.case_insensitive,
            multiline=input.multiline,
            before=_pick(input.before, input.context) if content else 0,
            after=_pick(input.after, input.context) if content else 0,
            first_match_only=input.output_mode == "files_with_matches",
        )
        # Files the permission rules keep from being read, or outside the boundary, are
        # neither shown nor counted.
        hide = hider(ctx, root)
        rg = shutil.which("rg") if self.use_ripgrep else None
        if rg is not None:
            hits, hidden = await _grep_rg.search(rg, query, hide)
        else:
            hits, hidden = await anyio.to_thread.run_sync(
                partial(_grep_py.search, query, hide), abandon_on_cancel=True
            )
        text, total = format_hits(
            hits,
            input.output_mode,
            line_numbers=input.line_numbers,
            context=bool(query.before or query.after),
            head_limit=input.head_limit,
        )
        return ToolOutput(
            with_note(text, hidden),
            metadata={
                "root": str(root),
                "files": len(hits),
                "lines": total,
                "truncated": bool(input.head_limit) and total > (input.head_limit or 0),
                "hidden": hidden,
                "engine": "ripgrep" if rg is not None else "python",
            },
        )


def _root(input: GrepInput, ctx: ToolContext) -> Path:
    return ctx.resolve(input.path) if input.path else ctx.workspace


def _check_root(root: Path) -> bool:
    """Whether the search root is a folder; a clear error when it does not exist."""
    if not root.exists():
        raise ToolError(f"{root} does not exist")
    return root.is_dir()


def _pick(specific: int | None, both: int | None) -> int:
    if specific is not None:
        return specific
    return both or 0
