"""File helpers shared by the file tools: the decided target, reading it, writing it.

A file tool touches the path the permission engine decided on, not whatever the
path leads to by the time the tool runs. :class:`Target` carries both the path as
named and where it led at the decision (``real``). Every read, write and delete
walks to ``real``'s folder one component at a time with ``O_NOFOLLOW`` (so a
folder swapped for a symlink since the decision is noticed, not followed), then
works relative to that folder's descriptor; the last component is never followed
either. Anything that moved is a :class:`TargetChangedError`, never a write elsewhere.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from toolrun.errors import ToolError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins._temp import link_unnamed, named_temp, new_temp, sweep_once

_DIR_FLAGS = (
    os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY)
)


class TargetChangedError(ToolError):
    """The file (or a folder above it) is no longer what the permission engine decided on."""


@dataclass(frozen=True, slots=True)
class TextFile:
    """A text file's content with line endings normalised to ``\\n``.

    ``newline`` is what the file used (``"\\r\\n"`` when every line ends so), so a
    write can put the file back the way it was.
    """

    text: str
    newline: str = "\n"


def _realpath(path: str) -> str:
    """Where ``path`` leads now, resolved exactly as the permission engine resolves it."""
    from toolrun.permissions.paths import normalise, realpath

    return realpath(normalise(path))


@dataclass(frozen=True, slots=True)
class Target:
    """A path as the input named it (absolute, normalised) and where it led when decided."""

    path: Path
    real: str

    @classmethod
    def of(cls, path: Path, ctx: ToolContext | None = None) -> Target:
        """``path`` with the target the call was decided on (or, outside the executor, the
        one it has now)."""
        decided = decided_real(path, ctx)
        return cls(path, decided if decided is not None else _realpath(str(path)))

    def changed(self, detail: str) -> TargetChangedError:
        return TargetChangedError(f"{self.path}: target changed after the decision ({detail})")

    def check(self) -> None:
        """The path must still lead where it led at the decision."""
        now = _realpath(str(self.path))
        if now != self.real:
            raise self.changed(f"it led to {self.real}, now to {now}")

    def exists(self) -> bool:
        return os.path.lexists(self.real)

    def is_dir(self) -> bool:
        return os.path.isdir(self.real) and not os.path.islink(self.real)

    @property
    def name(self) -> str:
        return os.path.basename(self.real)

    def open_folder(self, *, create: bool) -> int:
        """A descriptor of ``real``'s folder, reached without following any symlink."""
        return _open_dir(self, os.path.dirname(self.real), create=create)

    def lstat(self, folder: int) -> os.stat_result | None:
        """The last component, not followed; a symlink there is a change."""
        try:
            st = os.stat(self.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode):
            raise self.changed(f"{self.real} is now a symlink")
        return st


def decided_real(path: Path | str, ctx: ToolContext | None) -> str | None:
    """Where ``path`` led when the call was decided; None when no decision is known (a
    tool run outside the executor). A path the decision did not cover is refused."""
    if ctx is None or ctx.decided is None:
        return None
    real = ctx.decided_target(path)
    if real is None:
        raise ToolError(f"{path}: the permission check did not decide on this path; not touched")
    return real


def _open_dir(target: Target, directory: str, *, create: bool) -> int:
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in [p for p in directory.split("/") if p]:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise ToolError(f"{target.path} does not exist") from None
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                child = _reopen(target, part, fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                child = _reopen(target, part, fd)
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def _reopen(target: Target, part: str, fd: int) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        st = os.stat(part, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise target.changed(f"{part} in {target.real} is now a symlink") from None
        raise ToolError(f"{target.path}: {part} is not a directory") from None


def opened_elsewhere(fd: int, expected: str | None) -> str | None:
    """Where an open descriptor really is, when that is not ``expected`` (None if it is,
    or if it cannot be told: no ``/proc``)."""
    if expected is None:
        return None
    try:
        actual = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return actual if actual != expected else None


def require_file(target: Target) -> None:
    """Raise a clear :class:`ToolError` unless ``target`` is an existing regular file."""
    if target.is_dir():
        raise ToolError(f"{target.path} is a directory, not a file")
    if not os.path.exists(target.real):
        raise ToolError(f"{target.path} does not exist")


def read_text(target: Target) -> TextFile:
    """The UTF-8 text of ``target``, for tools that change it."""
    require_file(target)
    target.check()
    folder = target.open_folder(create=False)
    try:
        try:
            fd = os.open(target.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise target.changed(f"{target.real} is now a symlink") from None
            raise
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{target.path} is not a UTF-8 text file") from None
    if "\r\n" in text and text.count("\r\n") == text.count("\n"):
        return TextFile(text.replace("\r\n", "\n"), "\r\n")
    return TextFile(text)


def write_text(target: Target, text: str, newline: str = "\n") -> int:
    """Write ``text`` atomically with ``newline`` line endings; return the bytes written."""
    if newline != "\n":
        text = text.replace("\n", newline)
    data = text.encode("utf-8")
    atomic_write(target, data)
    return len(data)


def atomic_write(target: Target, data: bytes) -> None:
    """Replace ``target.real`` with ``data`` in one step (temp file + rename in its folder).

    Parent folders are created. An existing file keeps its permission bits; a new one
    gets the usual ``0o666`` minus the umask. A symlink the path went through when
    decided is written through: its target changes, the link stays.
    """
    target.check()
    folder = target.open_folder(create=True)
    name = target.name
    try:
        st = target.lstat(folder)
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{target.path} is a directory, not a file")
        mode = stat.S_IMODE(st.st_mode) if st is not None else None
        # unnamed while it is written (see _temp): a crash leaves nothing in the folder
        sweep_once(folder, os.path.dirname(target.real))
        perm = 0o600 if mode is not None else 0o666
        fd, tmp = new_temp(folder, perm)
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            _write_all(fd, data)
            os.fsync(fd)
            if tmp is None:
                tmp = link_unnamed(fd, folder)
            if tmp is None:  # it cannot be linked here: write it again under a name
                os.close(fd)
                fd = -1
                fd, tmp = named_temp(folder, perm)
                if mode is not None:
                    os.fchmod(fd, mode)
                _write_all(fd, data)
                os.fsync(fd)
            # Immediately before the rename: the folder is still where it was decided (not
            # moved away since the walk) and its last component is still no symlink.
            moved = opened_elsewhere(folder, os.path.dirname(target.real))
            if moved is not None:
                raise target.changed(f"its folder moved to {moved}")
            target.lstat(folder)
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            if tmp is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp, dir_fd=folder)
            raise
        finally:
            if fd >= 0:
                os.close(fd)
    finally:
        os.close(folder)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def delete(target: Target) -> None:
    """Remove the file ``target.path`` names (a symlink named directly goes, not its target)."""
    target.check()
    link = str(target.path)
    if link != target.real and os.path.islink(link):
        # The name itself is a symlink: remove the link, in its own (resolved) folder.
        entry = Target(target.path, os.path.join(_realpath(os.path.dirname(link)),
                                                 os.path.basename(link)))
        folder = _open_dir(entry, os.path.dirname(entry.real), create=False)
        try:
            os.unlink(os.path.basename(link), dir_fd=folder)
        finally:
            os.close(folder)
        return
    folder = target.open_folder(create=False)
    try:
        target.lstat(folder)
        os.unlink(target.name, dir_fd=folder)
    finally:
        os.close(folder)
