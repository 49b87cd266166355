"""File locks on canonical paths, shared by every plan of one process."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio


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
    """One FIFO lock per canonical path; several paths are taken in one sorted order."""

    def __init__(self) -> None:
        self._locks: dict[Path, anyio.Lock] = {}
        self._users: dict[Path, int] = {}

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
            yield tuple(keys)
        finally:
            for key, lock in reversed(held):
                lock.release()
                self._leave(key)

    def __len__(self) -> int:
        return len(self._locks)
