"""The run journal: ``.toolrun/runs/<run-id>.jsonl``, one JSON record per event.

Each record is written with one ``write(2)`` as soon as it is final, so it
survives toolrun being killed; a group-commit thread fsyncs whatever was
written since its last pass (at most every 50 ms), so a burst of results costs
one fsync rather than one each (~170 us apiece here), and :meth:`Journal.close`
fsyncs the rest.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

SYNC_INTERVAL_S = 0.05


def new_run_id() -> str:
    """Sortable by time, unique enough: ``20261129T190312Z-3f9a1c``."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


def runs_dir(workspace: Path) -> Path:
    return workspace / ".toolrun" / "runs"


def _ignore_in_git(folder: Path) -> None:
    """Keep ``.toolrun/`` out of ``git status``, as pytest and mypy do with their caches."""
    ignore = folder / ".gitignore"
    if folder.name == ".toolrun" and not ignore.exists():
        try:
            ignore.write_text("# written by toolrun: run journals are local\n*\n")
        except OSError:
            pass  # a read-only folder still gets its journal


class Journal:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        _ignore_in_git(path.parent.parent)
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        # The syncer has its own descriptor, so fsync never holds up a write.
        self._sync_fd = os.dup(self._fd)
        self._dirty = threading.Event()
        self._stop = False
        self._lock = threading.Lock()
        self._syncer = threading.Thread(target=self._sync_loop, name="journal-fsync", daemon=True)
        self._syncer.start()

    @classmethod
    def for_run(cls, workspace: Path, run_id: str) -> Journal:
        return cls(runs_dir(workspace) / f"{run_id}.jsonl")

    def write(self, record: dict[str, Any]) -> None:
        self.write_line(json.dumps(record, ensure_ascii=False, default=str))

    def write_line(self, line: str) -> None:
        """Append one record already serialised as a line of JSON."""
        data = (line + "\n").encode()
        with self._lock:
            # O_APPEND + a single write keeps records whole even if a reader tails the file.
            os.write(self._fd, data)
        self._dirty.set()

    def _sync_loop(self) -> None:
        while True:
            self._dirty.wait()
            self._dirty.clear()
            if self._stop:
                return
            os.fsync(self._sync_fd)
            # fsync holds the inode lock that write() needs; pausing between passes keeps
            # writers from queueing behind it while a burst of results comes in.
            time.sleep(SYNC_INTERVAL_S)

    def close(self) -> None:
        if self._fd < 0:
            return
        self._stop = True
        self._dirty.set()
        self._syncer.join(timeout=5)
        with self._lock:
            os.fsync(self._fd)
            os.close(self._fd)
            os.close(self._sync_fd)
            self._fd = self._sync_fd = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
