"""The temporary file an atomic write fills before it is renamed into place.

Where the kernel allows it the file is made with ``O_TMPFILE``: it has no name while it
is written, so a toolrun killed mid-write (even with SIGKILL) leaves nothing behind.
Once it is whole it is linked under a name (``linkat`` through ``/proc/self/fd``) and
renamed over the target at once. Elsewhere (no ``O_TMPFILE`` on the file system, no
``/proc``) it is a named file, ``.toolrun-<pid>-<hex>.tmp``; such a file whose process
is gone is removed by the next write into that folder (:func:`sweep_once`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat

#: a temporary file of ours: the pid of the process that made it, 12 hex digits
TEMP_NAME = re.compile(r"\.toolrun-([0-9]{1,10})-[0-9a-f]{12}\.tmp")
_NAMED_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_UNNAMED_FLAGS = getattr(os, "O_TMPFILE", 0) | os.O_WRONLY | os.O_CLOEXEC
# a file system that cannot make an unnamed file says one of these
_NO_TMPFILE = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT})
_swept: set[str] = set()  # folders swept by this process (once each)


def temp_name() -> str:
    return f".toolrun-{os.getpid()}-{secrets.token_hex(6)}.tmp"


def new_temp(folder: int, perm: int) -> tuple[int, str | None]:
    """A new file in ``folder`` to write: (descriptor, None) for an unnamed one, else
    (descriptor, its name)."""
    if _UNNAMED_FLAGS & ~(os.O_WRONLY | os.O_CLOEXEC) and os.path.isdir("/proc/self/fd"):
        try:
            return os.open(".", _UNNAMED_FLAGS, perm, dir_fd=folder), None
        except OSError as exc:
            if exc.errno not in _NO_TMPFILE:
                raise
    return named_temp(folder, perm)


def named_temp(folder: int, perm: int) -> tuple[int, str]:
    name = temp_name()
    return os.open(name, _NAMED_FLAGS, perm, dir_fd=folder), name


def link_unnamed(fd: int, folder: int) -> str | None:
    """Give the unnamed file ``fd`` a temporary name in ``folder`` (None: it cannot be)."""
    name = temp_name()
    try:
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=folder, follow_symlinks=True)
    except OSError:
        return None
    return name


def _gone(pid: int) -> bool:
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, another user's
    return False


def sweep_once(folder: int, path: str) -> None:
    """Remove from ``folder`` (at ``path``) the temporary files of ours whose process is
    gone, the first time this process writes there. Never raises: it is housekeeping."""
    if path in _swept:
        return
    _swept.add(path)
    with contextlib.suppress(OSError):
        # (``folder`` may be an O_PATH descriptor, which cannot be listed)
        listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=folder)
        try:
            names = [entry.name for entry in os.scandir(listing)]
        finally:
            os.close(listing)
        for name in names:
            found = TEMP_NAME.fullmatch(name)
            if found is None or not _gone(int(found.group(1))):
                continue
            with contextlib.suppress(OSError):
                info = os.stat(name, dir_fd=folder, follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid():
                    os.unlink(name, dir_fd=folder)
