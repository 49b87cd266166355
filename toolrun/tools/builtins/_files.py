"""File helpers shared by the file tools: reading text for editing, atomic writes."""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from toolrun.errors import ToolError


@dataclass(frozen=True, slots=True)
class TextFile:
    """A text file's content with line endings normalised to ``\\n``.

    ``newline`` is what the file used (``"\\r\\n"`` when every line ends so), so a
    write can put the file back the way it was.
    """

    text: str
    newline: str = "\n"


def require_file(path: Path) -> None:
    """Raise a clear :class:`ToolError` unless ``path`` is an existing regular file."""
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file")
    if not path.exists():
        raise ToolError(f"{path} does not exist")


def read_text(path: Path) -> TextFile:
    """The UTF-8 text of ``path``, for tools that change it."""
    require_file(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not a UTF-8 text file") from None
    if "\r\n" in text and text.count("\r\n") == text.count("\n"):
        return TextFile(text.replace("\r\n", "\n"), "\r\n")
    return TextFile(text)


def write_text(path: Path, text: str, newline: str = "\n") -> int:
    """Write ``text`` atomically with ``newline`` line endings; return the bytes written."""
    if newline != "\n":
        text = text.replace("\n", newline)
    data = text.encode("utf-8")
    atomic_write(path, data)
    return len(data)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step (temp file + rename in the same folder).

    Parent folders are created. An existing file keeps its permission bits; a new one
    gets the usual ``0o666`` minus the umask. A symlink is written through: its target
    changes, the link stays.
    """
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is not None else 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
