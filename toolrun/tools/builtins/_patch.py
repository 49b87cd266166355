"""The Codex ``*** Begin Patch`` format: parsing, and applying hunks to text in memory.

::

    *** Begin Patch
    *** Add File: docs/new.md
    +first line
    *** Delete File: old.txt
    *** Update File: src/app.py
    *** Move to: src/main.py
    @@ def main():
     context line
    -removed line
    +added line
    *** End of File
    *** End Patch

A hunk is found by its context and removed lines, searching forward from the
previous hunk (after any ``@@ header`` line), first exactly, then ignoring
trailing whitespace. ``*** End of File`` prefers a match at the end of the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from toolrun.errors import ToolError

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE, MOVE = (
    "*** Add File: ",
    "*** Delete File: ",
    "*** Update File: ",
    "*** Move to: ",
)
END_OF_FILE = "*** End of File"
_UNIFIED_RANGE = re.compile(r"(?:-\d+(?:,\d+)? \+\d+(?:,\d+)? )?@@.*")


class PatchSyntaxError(ToolError):
    """The patch text is not in the ``*** Begin Patch`` format."""


class HunkError(ToolError):
    """A hunk does not apply to the file's current content."""


@dataclass(frozen=True, slots=True)
class Hunk:
    headers: tuple[str, ...]  # the text after each "@@", if any
    lines: tuple[tuple[str, str], ...]  # (" " | "-" | "+", text)
    end_of_file: bool = False

    @property
    def old(self) -> tuple[str, ...]:
        """Context and removed lines: what the file must contain."""
        return tuple(text for kind, text in self.lines if kind != "+")

    @property
    def new(self) -> tuple[str, ...]:
        """Context and added lines: what the file will contain."""
        return tuple(text for kind, text in self.lines if kind != "-")


@dataclass(frozen=True, slots=True)
class AddFile:
    path: str
    content: str


@dataclass(frozen=True, slots=True)
class DeleteFile:
    path: str


@dataclass(frozen=True, slots=True)
class UpdateFile:
    path: str
    hunks: tuple[Hunk, ...]
    move_to: str | None = None


FileChange = AddFile | DeleteFile | UpdateFile


@dataclass(frozen=True, slots=True)
class Patch:
    changes: tuple[FileChange, ...]

    def paths(self) -> list[str]:
        """Every path the patch touches, move destinations included, in order."""
        out: list[str] = []
        for change in self.changes:
            out.append(change.path)
            if isinstance(change, UpdateFile) and change.move_to is not None:
                out.append(change.move_to)
        return out


def parse_patch(text: str) -> Patch:
    """Parse a patch; raise :class:`PatchSyntaxError` naming the offending line."""
    return _Parser(text).parse()


class _Parser:
    def __init__(self, text: str) -> None:
        self.lines = text.replace("\r\n", "\n").split("\n")
        self.first, self.last = 0, len(self.lines) - 1
        while self.first <= self.last and not self.lines[self.first].strip():
            self.first += 1
        while self.last >= self.first and not self.lines[self.last].strip():
            self.last -= 1
        self._unwrap_heredoc()
        self.i = self.first + 1

    def _unwrap_heredoc(self) -> None:
        """Accept ``<<'EOF' ... EOF`` around the patch, as Codex does."""
        if self.first < self.last and self.lines[self.first].startswith("<<"):
            marker = self.lines[self.first][2:].strip().strip("'\"")
            if marker and self.lines[self.last].strip() == marker:
                self.first += 1
                self.last -= 1

    def error(self, index: int, message: str) -> PatchSyntaxError:
        return PatchSyntaxError(f"invalid patch: line {index + 1}: {message}")

    def parse(self) -> Patch:
        if self.first > self.last or self.lines[self.first].strip() != BEGIN:
            raise self.error(self.first, f"the patch must start with {BEGIN!r}")
        if self.last == self.first or self.lines[self.last].strip() != END:
            raise self.error(self.last, f"the patch must end with {END!r}")
        changes: list[FileChange] = []
        while self.i < self.last:
            line = self.lines[self.i]
            if line.startswith(ADD):
                changes.append(self._add(self._path(ADD)))
            elif line.startswith(DELETE):
                changes.append(DeleteFile(self._path(DELETE)))
            elif line.startswith(UPDATE):
                changes.append(self._update(self._path(UPDATE)))
            elif not line.strip():
                self.i += 1
            else:
                raise self.error(
                    self.i,
                    f"expected '*** Add File:', '*** Delete File:' or '*** Update File:', "
                    f"got {line!r}",
                )
        if not changes:
            raise self.error(self.first, "the patch changes no files")
        return Patch(tuple(changes))

    def _path(self, prefix: str) -> str:
        path = self.lines[self.i][len(prefix) :].strip()
        if not path:
            raise self.error(self.i, f"{prefix.strip()} needs a path")
        self.i += 1
        return path

    def _add(self, path: str) -> AddFile:
        body: list[str] = []
        while self.i < self.last and not self.lines[self.i].startswith("*** "):
            line = self.lines[self.i]
            if not line.startswith("+"):
                raise self.error(self.i, f"lines of an added file start with '+', got {line!r}")
            body.append(line[1:])
            self.i += 1
        return AddFile(path, "".join(f"{line}\n" for line in body))

    def _update(self, path: str) -> UpdateFile:
        move_to = None
        if self.i < self.last and self.lines[self.i].startswith(MOVE):
            move_to = self._path(MOVE)
        hunks: list[Hunk] = []
        while self.i < self.last and (
            not self.lines[self.i].startswith("*** ") or self.lines[self.i] == END_OF_FILE
        ):
            hunks.append(self._hunk(first=not hunks))
        if not hunks and move_to is None:
            raise self.error(self.i, f"'*** Update File: {path}' has no hunks")
        return UpdateFile(path, tuple(hunks), move_to)

    def _hunk(self, *, first: bool) -> Hunk:
        start = self.i
        headers: list[str] = []
        while self.i < self.last and self.lines[self.i].startswith("@@"):
            header = self.lines[self.i][2:].strip()
            if header and not _UNIFIED_RANGE.fullmatch(header):  # "@@ -1,3 +1,4 @@": no anchor
                headers.append(header)
            self.i += 1
        if self.i == start and not first:
            raise self.error(self.i, f"expected '@@' to start a hunk, got {self.lines[self.i]!r}")
        lines: list[tuple[str, str]] = []
        end_of_file = False
        while self.i < self.last:
            line = self.lines[self.i]
            if line == END_OF_FILE:
                end_of_file = True
                self.i += 1
                break
            if line.startswith(("@@", "*** ")):
                break
            kind, text = (line[0], line[1:]) if line else (" ", "")
            if kind not in " -+":
                raise self.error(self.i, f"hunk lines start with ' ', '-' or '+', got {line!r}")
            lines.append((kind, text))
            self.i += 1
        if not lines:
            raise self.error(start, "empty hunk")
        return Hunk(tuple(headers), tuple(lines), end_of_file)


def apply_hunks(text: str, hunks: Sequence[Hunk]) -> str:
    """``text`` (``\\n`` line endings) with every hunk applied; :class:`HunkError` if one misses."""
    lines = text.removesuffix("\n").split("\n") if text else []
    cursor = 0
    edits: list[tuple[int, int, tuple[str, ...]]] = []
    for number, hunk in enumerate(hunks, start=1):
        for header in hunk.headers:
            at = _seek(lines, (header,), cursor, end_of_file=False)
            if at is None:
                raise HunkError(f"hunk {number}: the @@ line {header!r} is not in the file")
            cursor = at + 1
        if not hunk.old:
            edits.append((cursor if hunk.headers else len(lines), 0, hunk.new))
            continue
        old = hunk.old
        at = _seek(lines, old, cursor, hunk.end_of_file)
        if at is None and old[-1] == "":  # a trailing blank line the file may not have
            old = old[:-1]
            at = _seek(lines, old, cursor, hunk.end_of_file) if old else None
        if at is None:
            expected = "\n".join(f"  {line}" for line in hunk.old)
            raise HunkError(
                f"hunk {number} does not match the file; expected these lines:\n{expected}"
            )
        edits.append((at, len(old), _replacement(hunk, lines[at : at + len(old)])))
        cursor = at + len(old)
    for at, count, replacement in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[at : at + count] = replacement
    keep_final_newline = text.endswith("\n") or not text
    return "\n".join(lines) + ("\n" if lines and keep_final_newline else "")


def _replacement(hunk: Hunk, matched: list[str]) -> tuple[str, ...]:
    """The hunk's new lines, with context lines kept as the file has them."""
    out: list[str] = []
    k = 0  # index into the matched file lines
    for kind, text in hunk.lines:
        if kind == "+":
            out.append(text)
            continue
        if kind == " " and k < len(matched):
            out.append(matched[k])
        k += 1
    return tuple(out)


def _seek(lines: list[str], wanted: Sequence[str], start: int, end_of_file: bool) -> int | None:
    """The first index >= start where ``wanted`` occurs (exact, then ignoring trailing blanks)."""
    n = len(wanted)
    last_start = len(lines) - n
    same: Callable[[str, str], bool]
    for same in (str.__eq__, lambda a, b: a.rstrip() == b.rstrip()):
        if end_of_file and last_start >= start and _at(lines, wanted, last_start, same):
            return last_start
        for at in range(start, last_start + 1):
            if _at(lines, wanted, at, same):
                return at
    return None


def _at(lines: list[str], wanted: Sequence[str], at: int, same: Callable[[str, str], bool]) -> bool:
    return all(same(lines[at + k], w) for k, w in enumerate(wanted))
