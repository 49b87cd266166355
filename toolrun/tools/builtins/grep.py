"""Grep: search file contents with a regex (ripgrep when installed, pure Python otherwise)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from toolrun.errors import ToolError
from toolrun.tools.base import BaseTool, ToolContext, ToolKind, ToolOutput
from toolrun.tools.builtins import _grep_py, _grep_rg
from toolrun.tools.builtins._files import not_regular
from toolrun.tools.builtins._grep_core import OutputMode, Query, check_pattern, format_hits
from toolrun.tools.builtins._grep_scan import MAX_TEXT_BYTES
from toolrun.tools.builtins._hidden import hider, with_note
from toolrun.tools.inputs import (
    FieldSpec,
    InputSpec,
    Params,
    boolean,
    choice,
    integer,
    optional,
    pydantic_models,
    string,
)


@dataclass(frozen=True, slots=True)
class GrepParams(Params):
    """A validated Grep input (its schema and messages: :class:`GrepInput`)."""

    pattern: str
    path: str | None = None
    glob: str | None = None
    type: str | None = None
    output_mode: OutputMode = "files_with_matches"
    case_insensitive: bool = False
    line_numbers: bool = True
    after: int | None = None
    before: int | None = None
    context: int | None = None
    head_limit: int | None = None
    multiline: bool = False


INPUT = InputSpec(
    GrepParams,
    "GrepInput",
    pattern=string,
    path=optional(string),
    glob=optional(string),
    type=optional(string),
    output_mode=choice("content", "files_with_matches", "count"),
    case_insensitive=FieldSpec(boolean, aliases=("-i",)),
    line_numbers=FieldSpec(boolean, aliases=("-n",)),
    after=FieldSpec(optional(integer(ge=0)), aliases=("-A",)),
    before=FieldSpec(optional(integer(ge=0)), aliases=("-B",)),
    context=FieldSpec(optional(integer(ge=0)), aliases=("-C",)),
    head_limit=optional(integer(ge=0)),
    multiline=boolean,
)


class GrepTool(BaseTool[GrepParams]):
    name = "Grep"
    description = (
        "Search file contents with a regular expression. Skips hidden and .gitignore'd "
        "files like ripgrep; paths are sorted."
    )
    kind = ToolKind.READ
    is_retry_safe = True
    concurrency = "always"
    input_spec = INPUT

    def __init__(self, *, use_ripgrep: bool = True) -> None:
        self.use_ripgrep = use_ripgrep

    def is_concurrency_safe(self, input: GrepParams, ctx: ToolContext | None = None) -> bool:
        return True

    def affected_paths(self, input: GrepParams, ctx: ToolContext) -> tuple[Path, ...]:
        return (_root(input, ctx),)

    async def run(self, input: GrepParams, ctx: ToolContext) -> ToolOutput:
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
            hits, hidden, cut = await _grep_rg.search(rg, query, hide)
        else:
            hits, hidden, cut = await _grep_py.search_apart(query, hide)
        text, total = format_hits(
            hits,
            input.output_mode,
            line_numbers=input.line_numbers,
            context=bool(query.before or query.after),
            head_limit=input.head_limit,
        )
        if cut:
            text += (f"\n[{cut} {'file' if query.multiline else 'line'}{'s' if cut > 1 else ''}"
                     f" longer than {MAX_TEXT_BYTES >> 20} MiB searched in"
                     f" {'its' if cut == 1 else 'their'} first {MAX_TEXT_BYTES >> 20} MiB only]")
        return ToolOutput(
            with_note(text, hidden),
            metadata={
                "root": str(root),
                "files": len(hits),
                "lines": total,
                "truncated": bool(input.head_limit) and total > (input.head_limit or 0),
                "hidden": hidden,
                **({"cut": cut} if cut else {}),
                "engine": "ripgrep" if rg is not None else "python",
            },
        )


def _root(input: GrepParams, ctx: ToolContext) -> Path:
    return ctx.resolve(input.path) if input.path else ctx.workspace


def _check_root(root: Path) -> bool:
    """Whether the search root is a folder; a clear error when it does not exist."""
    if not root.exists():
        raise ToolError(f"{root} does not exist")
    if root.is_dir():
        return True
    kind = not_regular(root.stat())
    if kind is not None:  # a FIFO, a device: a read may never end
        raise ToolError(f"{root} is not a regular file ({kind}); Grep searches files")
    return False


def _pick(specific: int | None, both: int | None) -> int:
    if specific is not None:
        return specific
    return both or 0


#: the pydantic model (schemas, messages), imported with pydantic on first use
__getattr__ = pydantic_models("GrepInput")
