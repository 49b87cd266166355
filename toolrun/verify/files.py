"""Which written files a verifier checks, and which of their lines an edit touched.

Patterns are gitignore-style (``pathspec``), matched against the file's path relative to
the workspace; a file outside the workspace is never matched. Touched lines come from
the ``structuredPatch`` hunks the write tools already compute: the new file's added
lines, plus the line now where lines were removed (a deletion can break the line after
it). A write with no diff (over the diff size cap) counts as touching every line.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the write tools whose results are verified
WRITE_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "ApplyPatch"})


def pattern_error(pattern: str) -> str | None:
    """Why pathspec cannot read ``pattern``, or None."""
    import pathspec

    if not pattern.strip():
        return "an empty pattern matches nothing"
    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except Exception as exc:  # noqa: BLE001 - pathspec raises several kinds
        return str(exc)
    return None


@functools.lru_cache(maxsize=64)
def _spec(patterns: tuple[str, ...]) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def matching(patterns: tuple[str, ...], files: Iterable[str], workspace: Path) -> list[str]:
    """The absolute ``files`` inside ``workspace`` that ``patterns`` match, in order."""
    spec = _spec(patterns)
    out = []
    for file in files:
        relative = os.path.relpath(file, workspace)
        if relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative):
            continue
        if spec.match_file(relative):
            out.append(file)
    return out


#: None: every line of the file counts as touched
Touched = frozenset[int] | None


@dataclass(frozen=True, slots=True)
class Written:
    """The files a write left behind, each with the lines it touched."""

    files: Mapping[str, Touched]


def touched_lines(hunks: Sequence[Mapping[str, Any]]) -> frozenset[int]:
    """The new file's line numbers that ``hunks`` (a ``structuredPatch``) added or changed,
    and the line now standing where lines were removed."""
    touched: set[int] = set()
    for hunk in hunks:
        line = int(hunk.get("newStart", 1)) or 1
        for text in hunk.get("lines", ()):
            mark = str(text)[:1]
            if mark == "+":
                touched.add(line)
                line += 1
            elif mark == "-":
                touched.add(line)
            else:
                line += 1
    return frozenset(touched)


def written(tool: str, metadata: Mapping[str, Any], resolve: Any) -> Written:
    """What a successful write left, from its result's metadata. ``resolve`` turns a
    path as the input gave it into an absolute one (:meth:`ToolContext.resolve`)."""
    if tool == "ApplyPatch":
        files: dict[str, Touched] = {str(p): None for p in metadata.get("written", ())}
        for patch in metadata.get("patches", ()):
            # the tool resolved these same paths before it wrote: no error here
            path = str(resolve(str(patch.get("filePath", ""))))
            if path in files and "structuredPatch" in patch:
                files[path] = touched_lines(patch["structuredPatch"])
        return Written(files)
    given = metadata.get("path")
    if not given:
        return Written({})
    hunks = metadata.get("structuredPatch")
    return Written({str(given): touched_lines(hunks) if hunks is not None else None})


def same_file(reported: str, workspace: Path) -> str:
    """A verifier's path (relative to the workspace, absolute, or a ``file://`` URI) as an
    absolute, normalised path."""
    if reported.startswith("file://"):
        from urllib.parse import unquote, urlparse

        reported = unquote(urlparse(reported).path)
    return os.path.normpath(os.path.join(workspace, reported))
