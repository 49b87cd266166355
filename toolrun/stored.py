"""Whole outputs kept beside the journal: ``.toolrun/runs/<run-id>/<execution-id>.out``.

A tool shows a trimmed output (Bash: its first and last 512 KiB). When there is more,
the whole output is streamed, as it comes, to a file in the run's folder, and the
result records the file's name (relative to that folder), its size and its sha256.
The file is written as ``<name>.part`` and renamed when the call ends, so a finished
name always holds a whole output; a run killed mid-call leaves a ``.part`` that no
record names (``runs prune`` removes it with its run). At most ``toolrun.maxStoredOutput``
bytes are kept: past that the bytes are counted, not stored, and the record says
where the file was cut (``truncated_at``). No file is written when the journal is off.

Reading back (``show --full``) trusts nothing in the record: its name must be a plain
file name inside the run's folder (a record cannot point elsewhere), the file must be a
regular file (not a link) of the recorded size, and its sha256 must match before the
first byte is written out, and again over the bytes that were written.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from toolrun.config.sizes import format_size
from toolrun.errors import StoredOutputError

SUFFIX = ".out"
PART_SUFFIX = ".out.part"
READ_CHUNK = 1024 * 1024
# a plain file name: no separator, no leading dot (so never `.` or `..`)
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.out")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True, slots=True)
class StoredOutput:
    """What a result records about its stored output (``metadata.stored_output``)."""

    path: str  # relative to the run's folder
    bytes: int  # in the file
    sha256: str  # of the file
    truncated_at: int | None  # the cap (toolrun.maxStoredOutput) when it was hit
    output_bytes: int  # what the call printed in all

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "bytes": self.bytes,
            "sha256": self.sha256,
            "truncated_at": self.truncated_at,
            "output_bytes": self.output_bytes,
        }

    @classmethod
    def from_json(cls, value: object, where: str) -> StoredOutput:
        """The record read back from a journal; StoredOutputError naming ``where`` when it
        is not one toolrun writes."""
        if not isinstance(value, dict):
            raise StoredOutputError(f"{where}: the stored output record is not an object")
        path, size, digest = value.get("path"), value.get("bytes"), value.get("sha256")
        cut, printed = value.get("truncated_at"), value.get("output_bytes", size)
        if not isinstance(path, str) or _NAME.fullmatch(path) is None:
            raise StoredOutputError(
                f"{where}: the stored output path {path!r} is not a file name in the run's folder"
            )
        if not (
            _is_count(size)
            and isinstance(digest, str)
            and _SHA256.fullmatch(digest)
            and (cut is None or _is_count(cut))
            and _is_count(printed)
        ):
            raise StoredOutputError(f"{where}: the stored output record of {path} is malformed")
        return cls(path, cast(int, size), digest, cut, cast(int, printed))

    @property
    def cap_note(self) -> str | None:
        """The cap, stated, when it was hit."""
        if self.truncated_at is None:
            return None
        return (
            f"the call printed {self.output_bytes} bytes; only the first "
            f"{format_size(self.truncated_at)} are stored (toolrun.maxStoredOutput)"
        )


class OutputStore:
    """Where one call may store its whole output (on its ToolContext); it remembers what
    was stored, so the executor records it whatever way the call ended (a timeout too)."""

    def __init__(self, folder: Path, run_id: str, execution_id: str, max_bytes: int) -> None:
        self.folder = folder
        self.run_id = run_id
        self.execution_id = execution_id
        self.max_bytes = max_bytes
        self.stored: StoredOutput | None = None
        self.failure: str | None = None

    @property
    def name(self) -> str:
        return self.execution_id + SUFFIX

    def open(self) -> Spill:
        return Spill(self)

    def record(self) -> dict[str, Any]:
        """What the result's metadata gets: the stored output, or why it is not there."""
        if self.stored is not None:
            return {"stored_output": self.stored.as_json()}
        if self.failure is not None:
            return {"stored_output_error": self.failure}
        return {}


class Spill:
    """A call's whole output on its way to disk: written as it comes, never held."""

    def __init__(self, store: OutputStore) -> None:
        self._store = store
        self._hash = hashlib.sha256()
        self._kept = 0
        self._seen = 0
        self._part = store.folder / (store.execution_id + PART_SUFFIX)
        self._fd = -1
        if store.max_bytes <= 0:
            store.failure = "not stored: toolrun.maxStoredOutput is 0"
            return
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            store.folder.mkdir(exist_ok=True)  # .toolrun/runs/ is there: the journal is
            self._fd = os.open(self._part, flags, 0o644)
        except OSError as exc:
            self._fail(exc)

    def write(self, data: bytes) -> None:
        self._seen += len(data)
        room = self._store.max_bytes - self._kept
        if self._fd < 0 or room <= 0:
            return
        piece = memoryview(data)[:room]
        self._hash.update(piece)
        self._kept += len(piece)
        try:
            while piece:
                piece = piece[os.write(self._fd, piece) :]
        except OSError as exc:  # disk full: the call goes on, its result says why
            self._fail(exc)
            self.discard()

    def close(self) -> StoredOutput | None:
        """Put the file in place under its name and record it (None if it failed)."""
        if self._fd < 0:
            return None
        try:
            os.close(self._fd)
            self._fd = -1
            os.replace(self._part, self._store.folder / self._store.name)
        except OSError as exc:
            self._fail(exc)
            self.discard()
            return None
        limit = self._store.max_bytes
        stored = StoredOutput(
            path=self._store.name,
            bytes=self._kept,
            sha256=self._hash.hexdigest(),
            truncated_at=limit if self._seen > limit else None,
            output_bytes=self._seen,
        )
        self._store.stored = stored
        return stored

    def discard(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
        with contextlib.suppress(OSError):
            self._part.unlink()

    def _fail(self, exc: OSError) -> None:
        why = exc.strerror or str(exc)
        self._store.failure = f"the whole output could not be stored in {self._part}: {why}"


def stream_stored(folder: Path, stored: StoredOutput, write: Callable[[bytes], object]) -> None:
    """Write a stored output out, a chunk at a time, after checking it against its record.

    Raises :class:`StoredOutputError` naming the file when it is missing, not a regular
    file, or not what the record says (size or sha256), before anything is written; and
    when it changed while it was being written out.
    """
    path = folder / stored.path
    if folder.is_symlink():
        raise StoredOutputError(f"{folder} is a symbolic link, not the run's folder")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise StoredOutputError(
            f"{path}: the stored output is missing (deleted, or the run was pruned)"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StoredOutputError(
                f"{path}: a symbolic link, not a file: the stored output was replaced"
            ) from None
        raise StoredOutputError(f"{path}: cannot open the stored output: {_why(exc)}") from exc
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StoredOutputError(f"{path}: not a regular file; the stored output was replaced")
        if info.st_size != stored.bytes:
            raise StoredOutputError(
                f"{path}: the stored output was altered: it holds {info.st_size} bytes, "
                f"the journal records {stored.bytes}"
            )
        if _sha256(fh, None) != stored.sha256:
            raise StoredOutputError(
                f"{path}: the stored output was altered: its sha256 is not the one "
                f"the journal records ({stored.sha256})"
            )
        fh.seek(0)
        if _sha256(fh, write) != stored.sha256:
            raise StoredOutputError(f"{path}: the stored output changed while it was read")


def _sha256(fh: BinaryIO, write: Callable[[bytes], object] | None) -> str:
    digest = hashlib.sha256()
    while chunk := fh.read(READ_CHUNK):
        digest.update(chunk)
        if write is not None:
            write(chunk)
    return digest.hexdigest()


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)
