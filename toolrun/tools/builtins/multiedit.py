"""MultiEdit: several Edit replacements in one file, all or nothing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from toolrun.errors import ToolError
from toolrun.tools.base import BaseTool, ToolContext, ToolKind, ToolOutput
from toolrun.tools.builtins._diff import diff_metadata, note
from toolrun.tools.builtins._edits import replace
from toolrun.tools.builtins._files import Target, TextFile, read_text, write_text
from toolrun.tools.inputs import (
    FieldSpec,
    InputSpec,
    Params,
    boolean,
    items,
    pydantic_models,
    string,
)


@dataclass(frozen=True, slots=True)
class EditSpecParams(Params):
    """One validated edit of a MultiEdit input (its schema: :class:`EditSpec`)."""

    old_string: str
    new_string: str
    replace_all: bool = False


EDIT = InputSpec(
    EditSpecParams,
    "EditSpec",
    old_string=string,
    new_string=string,
    replace_all=boolean,
)


@dataclass(frozen=True, slots=True)
class MultiEditParams(Params):
    """A validated MultiEdit input (its schema and messages: :class:`MultiEditInput`)."""

    file_path: str
    edits: tuple[EditSpecParams, ...]


INPUT = InputSpec(
    MultiEditParams,
    "MultiEditInput",
    file_path=string,
    edits=FieldSpec(items(EDIT.check, min_length=1), nested=EditSpecParams),
)


class MultiEditTool(BaseTool[MultiEditParams]):
    name = "MultiEdit"
    description = (
        "Make several exact-string replacements in one file, in order. All or nothing: "
        "if one edit fails, nothing is written."
    )
    kind = ToolKind.WRITE
    input_spec = INPUT

    def affected_paths(self, input: MultiEditParams, ctx: ToolContext) -> tuple[Path, ...]:
        return (ctx.resolve(input.file_path, "file_path"),)

    async def run(self, input: MultiEditParams, ctx: ToolContext) -> ToolOutput:
        target = Target.of(ctx.resolve(input.file_path, "file_path"), ctx)
        return await anyio.to_thread.run_sync(_multi_edit, target, input.edits, input.file_path)


def _multi_edit(target: Target, edits: tuple[EditSpecParams, ...], given: str) -> ToolOutput:
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
    # the file is written: from here on nothing may turn the result into an error
    diff = diff_metadata(given, current.text, text)
    return ToolOutput(
        note(f"Applied {len(edits)} edits to {path} ({total} replacements)", diff),
        metadata={
            "path": str(path),
            "created": creating,
            "edits": len(edits),
            "replacements": total,
            **diff,
        },
    )


#: the pydantic model (schemas, messages), imported with pydantic on first use
__getattr__ = pydantic_models("EditSpec", "MultiEditInput")
