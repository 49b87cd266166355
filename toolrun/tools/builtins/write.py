"""Write: create or replace a whole file, atomically."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from toolrun.tools.base import BaseTool, ToolContext, ToolKind, ToolOutput
from toolrun.tools.builtins._diff import note, previous_text, write_diff
from toolrun.tools.builtins._files import Target, write_text
from toolrun.tools.inputs import InputSpec, Params, pydantic_models, string


@dataclass(frozen=True, slots=True)
class WriteParams(Params):
    """A validated Write input (its schema and messages: :class:`WriteInput`)."""

    file_path: str
    content: str


INPUT = InputSpec(WriteParams, "WriteInput", file_path=string, content=string)


class WriteTool(BaseTool[WriteParams]):
    name = "Write"
    description = (
        "Write a file, replacing it if it exists. Parent folders are created; the write is "
        "atomic and an existing file keeps its permissions."
    )
    kind = ToolKind.WRITE
    is_retry_safe = True  # idempotent: writing the same content twice is the same as once
    input_spec = INPUT

    def affected_paths(self, input: WriteParams, ctx: ToolContext) -> tuple[Path, ...]:
        return (ctx.resolve(input.file_path, "file_path"),)

    async def run(self, input: WriteParams, ctx: ToolContext) -> ToolOutput:
        target = Target.of(ctx.resolve(input.file_path, "file_path"), ctx)
        return await anyio.to_thread.run_sync(_write, target, input.content, input.file_path)


def _write(target: Target, content: str, given: str) -> ToolOutput:
    path = target.path
    created = not target.exists()
    before = "" if created else previous_text(target)  # read under the file's lock
    size = write_text(target, content)
    verb = "Created" if created else "Updated"
    diff = write_diff(given, before, content)
    return ToolOutput(
        note(f"{verb} {path} ({size} bytes)", diff),
        metadata={"path": str(path), "created": created, "bytes": size, **diff},
    )


#: the pydantic model (schemas, messages), imported with pydantic on first use
__getattr__ = pydantic_models("WriteInput")
