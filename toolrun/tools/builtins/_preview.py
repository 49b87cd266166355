"""``exec --dry-run --diff``: the diff each file edit would make, applied in plan order to
an in-memory copy of the files it touches. Nothing is written; files are only read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolrun.errors import ToolError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins._diff import diff_metadata
from toolrun.tools.builtins._edits import replace
from toolrun.tools.builtins._patch import AddFile, DeleteFile, apply_hunks, parse_patch

EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "ApplyPatch"})


@dataclass
class Preview:
    """Files as the edits so far left them: None for a file that is gone (or never was)."""

    ctx: ToolContext
    files: dict[Path, str | None] = field(default_factory=dict)

    def diff(self, tool: str, input: Mapping[str, Any]) -> str:
        """The unified diff the call would make, applied to the copy; raises ToolError
        when the call would fail (the copy is then left as it was)."""
        if tool == "ApplyPatch":
            return self._patch(str(input.get("patch") or input.get("input") or ""))
        given = str(input.get("file_path", ""))
        path = self.ctx.resolve(given, "file_path")
        old = self._text(path)
        if tool == "Write":
            new = str(input.get("content", ""))
        elif tool == "Edit":
            new = _edits(old, path, [input])
        else:
            new = _edits(old, path, list(input.get("edits") or ()))
        self.files[path] = new
        return str(diff_metadata(given, old or "", new)["diff"])

    def _patch(self, text: str) -> str:
        patch = parse_patch(text)
        staged: dict[Path, str | None] = {}
        out = []
        for change in patch.changes:
            path = self.ctx.resolve(change.path, "patch file")
            old = staged[path] if path in staged else self._text(path)
            if isinstance(change, AddFile):
                new_path, new = change.path, change.content
            elif isinstance(change, DeleteFile):
                if old is None:
                    raise ToolError(f"{change.path}: no such file")
                new_path, new = change.path, ""
                staged[path] = None
            else:
                if old is None:
                    raise ToolError(f"{change.path}: no such file")
                new_path, new = change.move_to or change.path, apply_hunks(old, change.hunks)
                if change.move_to is not None:
                    staged[path] = None
            if not isinstance(change, DeleteFile):
                staged[self.ctx.resolve(new_path, "patch file")] = new
            meta = diff_metadata(new_path, old or "", new, old_path=change.path)
            out.append(str(meta["diff"]))
        self.files.update(staged)
        return "".join(out)

    def _text(self, path: Path) -> str | None:
        if path in self.files:
            return self.files[path]
        try:
            from toolrun.tools.builtins._files import not_regular

            kind = not_regular(path.stat())
            if kind is not None:  # a FIFO would never end the read
                raise ToolError(f"{path}: cannot read it for a diff (it is {kind})")
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise ToolError(f"{path}: cannot read it for a diff ({exc})") from None


def _edits(old: str | None, path: Path, edits: list[Mapping[str, Any]]) -> str:
    text = old
    for edit in edits:
        old_string, new_string = str(edit.get("old_string", "")), str(edit.get("new_string", ""))
        if text is None or (old_string == "" and text == ""):
            if old_string != "":
                raise ToolError(f"{path} does not exist")
            text = new_string
            continue
        text, _ = replace(
            text, old_string, new_string, replace_all=bool(edit.get("replace_all")), path=path
        )
    return text or ""
