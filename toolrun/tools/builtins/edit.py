"""Edit: replace one exact string in a file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from toolrun.tools.base import BaseTool, ToolContext, ToolKind, ToolOutput
from toolrun.tools.builtins._diff import diff_metadata, note
from toolrun.tools.builtins._edits import replace
from toolrun.tools.builtins._files import Target, read_text, write_text
from toolrun.tools.inputs import InputSpec, Params, boolean, pydantic_models, string


@dataclass(frozen=True, slots=True)
class EditParams(Params):
    """A validated Edit input (its schema and messages: :class:`EditInput`)."""

    file_path: str
    old_string: str
    new_string: str
    replace_all: bool = False


INPUT = InputSpec(
    EditParams,
    "EditInput",
    file_path=string,
    old_string=string,
    new_string=string,
    replace_all=boolean,
)


class EditTool(BaseTool[EditParams]):
    name = "Edit"
    description = (
        "Replace an exact string in a file. old_string must occur exactly once unless "
        "replace_all is set; the write is atomic."
    )
    kind = ToolKind.WRITE
    input_spec = INPUT

    def affected_paths(self, input: EditParams, ctx: ToolContext) -> tuple[Path, ...]:
        return (ctx.resolve(input.file_path, "file_path"),)

    async def run(self, input: EditParams, ctx: ToolContext) -> ToolOutput:
        target = Target.of(ctx.resolve(input.file_path, "file_path"), ctx)
        return await anyio.to_thread.run_sync(_edit, target, input)


def _edit(target: Target, input: EditParams) -> ToolOutput:
    # Runs under the file's locks (in-process and cross-process), so the text read here
    # is the text the write replaces: no other writer's edit is lost in between.
    path = target.path
    meta = {"path": str(path)}
    if input.old_string == "" and not target.exists():
        write_text(target, input.new_string)
        diff = diff_metadata(input.file_path, "", input.new_string)
        return ToolOutput(
            note(f"Created {path}", diff),
            metadata={**meta, "created": True, "replacements": 0, **diff},
        )
    current = read_text(target)
    if input.old_string == "" and current.text == "" and input.new_string:
        new_text, count = input.new_string, 1
    else:
        new_text, count = replace(
            current.text,
            input.old_string,
            input.new_string,
            replace_all=input.replace_all,
            path=path,
        )
    write_text(target, new_text, current.newline)
    noun = "replacement" if count == 1 else "replacements"
    # the file is written: from here on nothing may turn the result into an error
    diff = diff_metadata(input.file_path, current.text, new_text)
    return ToolOutput(
        note(f"Edited {path} ({count} {noun})", diff),
        metadata={**meta, "created": False, "replacements": count, **diff},
    )


#: the pydantic model (schemas, messages), imported with pydantic on first use
__getattr__ = pydantic_models("EditInput")
