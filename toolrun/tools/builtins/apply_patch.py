"""ApplyPatch: Codex's ``*** Begin Patch`` format over several files, all or nothing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

from toolrun.errors import ToolError
from toolrun.tools.base import BaseTool, ToolContext, ToolKind, ToolOutput
from toolrun.tools.builtins._diff import previous_text, write_diff
from toolrun.tools.builtins._files import Target, delete, read_text, require_file, write_text
from toolrun.tools.builtins._patch import (
    AddFile,
    DeleteFile,
    HunkError,
    Patch,
    PatchSyntaxError,
    UpdateFile,
    apply_hunks,
    parse_patch,
)
from toolrun.tools.inputs import FieldSpec, InputSpec, Params, pydantic_models, string

__all__ = ["ApplyPatchParams", "ApplyPatchTool", "Patch", "PatchSyntaxError", "parse_patch"]


@dataclass(frozen=True, slots=True)
class ApplyPatchParams(Params):
    """A validated ApplyPatch input (its schema and messages: :class:`ApplyPatchInput`)."""

    patch: str


INPUT = InputSpec(ApplyPatchParams, "ApplyPatchInput", patch=FieldSpec(string, aliases=("input",)))


class ApplyPatchTool(BaseTool[ApplyPatchParams]):
    name = "ApplyPatch"
    description = (
        "Apply a Codex-format patch ('*** Begin Patch'): add, delete, update and move "
        "files. Every file is checked before any is written; one failure writes nothing."
    )
    kind = ToolKind.WRITE
    input_spec = INPUT

    def affected_paths(self, input: ApplyPatchParams, ctx: ToolContext) -> tuple[Path, ...]:
        """Every file the patch touches, move destinations included.

        Raises ``ValueError`` when the patch does not parse: the caller must then treat
        the call as not analysable (no paths known), never as touching nothing.
        """
        try:
            patch = parse_patch(input.patch)
        except PatchSyntaxError as e:
            raise ValueError(str(e)) from e
        return tuple(dict.fromkeys(ctx.resolve(p, "patch file") for p in patch.paths()))

    async def run(self, input: ApplyPatchParams, ctx: ToolContext) -> ToolOutput:
        patch = parse_patch(input.patch)
        return await anyio.to_thread.run_sync(_apply, patch, ctx)


def _apply(patch: Patch, ctx: ToolContext) -> ToolOutput:
    """Compute every new file in memory, then write; nothing is written if any check fails."""
    seen: dict[Path, str] = {}
    for given in patch.paths():
        path = ctx.resolve(given, "patch file")
        if path in seen:
            raise ToolError(f"{given}: the patch changes this file more than once")
        seen[path] = given
    writes: list[tuple[Target, str, str]] = []  # target, text, newline
    deletes: list[Target] = []
    summary: list[str] = []
    diffs: list[dict[str, Any]] = []  # per file: filePath, structuredPatch, diff
    for change in patch.changes:
        target = Target.of(ctx.resolve(change.path, "patch file"), ctx)
        try:
            if isinstance(change, AddFile):
                if target.is_dir():
                    raise ToolError("is a directory")
                writes.append((target, change.content, "\n"))
                summary.append(f"A {change.path}")
                diffs.append(_file_diff(change.path, "", change.content))
            elif isinstance(change, DeleteFile):
                require_file(target)
                deletes.append(target)
                summary.append(f"D {change.path}")
                diffs.append(_file_diff(change.path, previous_text(target), ""))
            else:
                before = read_text(target).text
                writes.append(_update(change, target, ctx))
                if change.move_to is not None:
                    deletes.append(target)
                summary.append(f"M {change.move_to or change.path}")
                diffs.append(
                    _file_diff(change.move_to or change.path, before, writes[-1][1], change.path)
                )
        except HunkError as e:
            raise ToolError(f"{change.path}: {e}; no file was changed") from None
        except ToolError as e:
            message = str(e).replace(str(target.path), change.path)
            raise ToolError(f"{change.path}: {message}; no file was changed") from None
    # Every target still leads where it was decided before the first is written, so a
    # change found later cannot leave the patch half applied in the common case.
    for target in [t for t, _, _ in writes] + deletes:
        target.check()
    for target, text, newline in writes:
        write_text(target, text, newline)
    for target in deletes:
        delete(target)
    return ToolOutput(
        "Success. Updated the following files:\n" + "\n".join(summary),
        metadata={
            "written": [str(t.path) for t, _, _ in writes],
            "deleted": [str(t.path) for t in deletes],
            "patches": diffs,
            "diff": "".join(d.get("diff", "") for d in diffs),
        },
    )


def _file_diff(path: str, old: str | None, new: str, old_path: str | None = None) -> dict[str, Any]:
    """One file's part of the result: its path and (when known) its diff."""
    return {"filePath": path, **write_diff(path, old, new, old_path=old_path)}


def _update(change: UpdateFile, source: Target, ctx: ToolContext) -> tuple[Target, str, str]:
    current = read_text(source)
    text = apply_hunks(current.text, change.hunks)
    if change.move_to is None:
        return source, text, current.newline
    target = Target.of(ctx.resolve(change.move_to, "patch file"), ctx)
    if target.is_dir():
        raise ToolError(f"cannot move to {change.move_to}: it is a directory")
    return target, text, current.newline


#: the pydantic model (schemas, messages), imported with pydantic on first use
__getattr__ = pydantic_models("ApplyPatchInput")
