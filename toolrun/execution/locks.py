"""File locks on canonical paths: in-process (every plan of one process) and across
processes (every toolrun on the machine).

The cross-process lock is ``fcntl.flock`` on a lock file named by a hash of the
canonical path, in a per-user lock folder: not on the file itself, because writes
replace the file by renaming a new one over it, and a lock on the old inode would not
stop a process that opened the new one. A lock file is never removed (removing it
would open the same gap).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import tempfile
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from toolrun.errors import ToolError

#: Polling back-off while another process holds a lock (cancellable, unlike a blocking flock).
_WAIT_S = (0.001, 0.002, 0.005, 0.01, 0.02)


class LockError(ToolError):
    """The cross-process lock could not be taken: the call fails, it never runs unlocked."""


def default_lock_dir() -> Path:
    """``$TOOLRUN_LOCK_DIR``, else ``$XDG_RUNTIME_DIR/toolrun-locks`` (private to the user
    already), else ``<tmp>/toolrun-locks-<uid>``."""
    configured = os.environ.get("TOOLRUN_LOCK_DIR")
    if configured:
        return Path(configured)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / "toolrun-locks"
    return Path(tempfile.gettempdir()) / f"toolrun-locks-{os.geteuid()}"


def _open_lock_dir(directory: Path) -> int:
    """The lock folder, created private; refused if it is a symlink or someone else's."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(directory, 0o700)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o022:
        os.close(fd)
        raise LockError(f"the lock folder {directory} is not private to this user")
    return fd


class ProcessLocks:
    """``flock`` on one lock file per canonical path."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else default_lock_dir()
        self._dir_fd: int | None = None

    def _folder(self) -> int:
        if self._dir_fd is None:
            self._dir_fd = _open_lock_dir(self.directory)
        return self._dir_fd

    async def acquire(self, key: Path) -> int:
        name = hashlib.sha256(os.fsencode(key)).hexdigest()
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, 0o600, dir_fd=self._folder())
        except OSError as exc:
            raise LockError(f"cannot take the lock for {key} in {self.directory}: {exc}") from None
        try:
            attempt = 0
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return fd
                except BlockingIOError:
                    await anyio.sleep(_WAIT_S[min(attempt, len(_WAIT_S) - 1)])
                    attempt += 1
        except BaseException:
            os.close(fd)
            raise

    @staticmethod
    def release(fd: int) -> None:
        os.close(fd)  # closing the only descriptor releases the flock

    def close(self) -> None:
        if self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None


def canonical_path(path: Path) -> Path:
    """Absolute path with symlinks resolved on the longest existing prefix.

    A file that does not exist yet keeps its missing tail as spelled, so a write
    through a symlinked directory and one through its real path share a key.
    """
    current = Path(os.path.abspath(path))
    missing: list[str] = []
    while True:
        try:
            real = current.resolve(strict=True)
            break
        except (FileNotFoundError, NotADirectoryError):
            if current.parent == current:
                real = current
                break
            missing.append(current.name)
            current = current.parent
        except (OSError, RuntimeError):  # a symlink loop: lock on the spelled path
            real = current
            break
    return real.joinpath(*reversed(missing))


class FileLocks:
    """One FIFO lock per canonical path, then its cross-process lock; several paths are
    taken in one sorted order (all in-process locks first, then all cross-process ones,
    so a task holding a cross-process lock never waits for an in-process one)."""

    def __init__(self, lock_dir: Path | None = None) -> None:
        self._locks: dict[Path, anyio.Lock] = {}
        self._users: dict[Path, int] = {}
        self.processes = ProcessLocks(lock_dir)

    def _enter(self, key: Path) -> anyio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = anyio.Lock()
        self._users[key] = self._users.get(key, 0) + 1
        return lock

    def _leave(self, key: Path) -> None:
        self._users[key] -= 1
        if self._users[key] == 0:
            del self._users[key]
            del self._locks[key]

    @asynccontextmanager
    async def hold(self, paths: Iterable[Path]) -> AsyncIterator[tuple[Path, ...]]:
        # One global order (sorted canonical paths) means two multi-file calls can never
        # wait on each other in a cycle.
        keys = sorted({canonical_path(p) for p in paths}, key=str)
        held: list[tuple[Path, anyio.Lock]] = []
        try:
            for key in keys:
                lock = self._enter(key)
                try:
                    await lock.acquire()
                except BaseException:
                    self._leave(key)
                    raise
                held.append((key, lock))
            flocks: list[int] = []
            try:
                for key in keys:
                    # one at a time: what was taken is released if a later wait is cancelled
                    flocks.append(await self.processes.acquire(key))  # noqa: PERF401
                yield tuple(keys)
            finally:
                for fd in reversed(flocks):
                    self.processes.release(fd)
        finally:
            for key, lock in reversed(held):
                lock.release()
                self._leave(key)

    def __len__(self) -> int:
        return len(self._locks)
