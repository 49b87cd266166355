"""MultiEdit: several Edit replacements in one file, all or nothing."""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread
from pydantic import Field

from toolrun.errors import ToolError
from toolrun.tools.base import BaseTool, ToolContext, ToolInput, ToolKind, ToolOutput
from toolrun.tools.builtins._diff import diff_metadata
from toolrun.tools.builtins._edits import replace
from toolrun.tools.builtins._files import Target, TextFile, read_text, write_text


class EditSpec(ToolInput):
    old_string: str = Field(description="The exact text to replace.")
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of exactly one."
    )


class MultiEditInput(ToolInput):
    file_path: str = Field(
        description="The file to change (absolute, or relative to the workspace)."
    )
    edits: list[EditSpec] = Field(
        min_length=1,
        description=(
            "Replacements applied in order, each to the result of the previous one. "
            "If any fails, the file is left untouched."
        ),
    )


class MultiEditTool(BaseTool[MultiEditInput]):
    name = "MultiEdit"
    description = (
        "Make several exact-string replacements in one file, in order. All or nothing: "
        "if one edit fails, nothing is written."
    )
    kind = ToolKind.WRITE
    input_model = MultiEditInput

    def affected_paths(self, input: MultiEditInput, ctx: ToolContext) -> tuple[Path, ...]:
        return (ctx.resolve(input.file_path, "file_path"),)

    async def run(self, input: MultiEditInput, ctx: ToolContext) -> ToolOutput:
        target = Target.of(ctx.resolve(input.file_path, "file_path"), ctx)
        return await anyio.to_thread.run_sync(_multi_edit, target, input.edits, input.file_path)


def _multi_edit(target: Target, edits: list[EditSpec], given: str) -> ToolOutput:
    # Read under the file's locks: the edits apply to what no other writer can change.
    path = target.path
    creating = not target.exists()
    current = TextFile("") if creating else read_text(target)
    text = current.text
    total = 0
    for index, edit in enumerate(edits):
        try:
            if index == 0 and creating and edit.old_string == "":
                text, count = edit.new_string, 1
            elif creating and index == 0:
                raise ToolError(f"{path} does not exist")
            else:
                text, count = replace(
                    text, edit.old_string, edit.new_string, replace_all=edit.replace_all, path=path
                )
        except ToolError as e:
            raise ToolError(f"edits[{index}]: {e}; no edit was applied") from None
        total += count
    write_text(target, text, current.newline)
    return ToolOutput(
        f"Applied {len(edits)} edits to {path} ({total} replacements)",
        metadata={
            "path": str(path),
            "created": creating,
            "edits": len(edits),
            "replacements": total,
            **diff_metadata(given, current.text, text),
        },
    )
