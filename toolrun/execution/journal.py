"""The run journal: ``.toolrun/runs/<run-id>.jsonl``, one JSON record per event.

:meth:`Journal.write` writes a record with one ``write(2)`` at once, so it
survives toolrun being killed. The executor instead adds records (:meth:`Journal.add`)
and flushes them with one ``write(2)`` (:meth:`Journal.flush`) before a call launches (its
``started`` record is then in the file) and once per scheduling tick, before the
results are shown: a result the user saw is in the journal. A group-commit thread
fsyncs whatever was written since its last pass (at most every 50 ms), so a burst of
results costs one fsync rather than one each (~170 us apiece here), and
:meth:`Journal.close` fsyncs the rest.

Text that is not valid UTF-8 (a directory name, a hook's output) reaches here as
Python's surrogate escapes; it is written as ``\\udcXX`` escapes
(``backslashreplace``), which inside a JSON string is a standard escape that
reads back to the same string.

One rule for what is written and what is read (:mod:`toolrun.execution.journal_read`): no line
is longer than :data:`MAX_LINE_BYTES` nor nested deeper than :data:`MAX_DEPTH`. A record
that would be (a Write of 65 MiB, an Edit of a 50 MB file) is kept whole in a file
beside the journal, ``<run-id>/<name>.record.json`` (as whole outputs are, see
:mod:`toolrun.stored`), and its line keeps the record's small fields (event,
ids, status, ...) with ``stored_record``: the file's name, size and sha256. A record
whose file cannot be written keeps those fields and ``stored_record_error`` (why).

While a run writes its journal it holds a shared ``flock`` on it (:func:`in_use`): a run
with no end record whose journal nobody holds crashed, and ``runs prune`` may delete it.

A journal that cannot be created raises
:class:`JournalError` before anything runs; a write that fails later (disk
full, I/O error) never stops the run: the journal stops there and
:attr:`Journal.failure` says what was lost.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from toolrun.errors import JournalError
from toolrun.execution.results import encode_json

SYNC_INTERVAL_S = 0.05
ENCODING_ERRORS = "backslashreplace"
#: the longest journal line (its newline included): a longer record is stored beside it
MAX_LINE_BYTES = 4 * 1024 * 1024
#: the deepest a journal line nests (a plan's input is at most 100 deep, a few levels in)
MAX_DEPTH = 200
#: a stored record's line keeps its fields whose JSON is at most this long
KEPT_FIELD_BYTES = 1024
RECORD_SUFFIX = ".record.json"


def new_run_id() -> str:
    """Sortable by time, unique enough: ``20261129T190312Z-3f9a1c``."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


def runs_dir(workspace: Path) -> Path:
    return workspace / ".toolrun" / "runs"


def stored_outputs_dir(journal: Path) -> Path:
    """The run's folder beside its journal (``<run-id>/`` next to ``<run-id>.jsonl``),
    where whole outputs trimmed for display are kept (:mod:`toolrun.stored`)."""
    return journal.with_suffix("")


def dumps(record: dict[str, Any]) -> str:
    return encode_json(record)


def encode_line(line: str) -> bytes:
    """One record as bytes: always valid UTF-8, lone surrogates as ``\\udcXX``."""
    return (line + "\n").encode("utf-8", ENCODING_ERRORS)


def _ignore_in_git(folder: Path) -> None:
    """Keep ``.toolrun/`` out of ``git status``, as pytest and mypy do with their caches."""
    ignore = folder / ".gitignore"
    if folder.name == ".toolrun" and not ignore.exists():
        try:
            ignore.write_text("# written by toolrun: run journals are local\n*\n")
        except OSError:
            pass  # a read-only folder still gets its journal


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _hold(fd: int) -> None:
    """Mark the journal as written by a live process: a shared lock, which the kernel
    drops when the process ends however it ends (kill -9 too). Shared: two journals
    of one file in one process do not stop each other."""
    with contextlib.suppress(OSError):  # a file system without locks: still journalled
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)


def in_use(path: Path) -> bool:
    """Whether a live process writes the journal at ``path`` (holds its lock): a run with
    no end record whose journal is not in use crashed. True when it cannot be told."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return True
    finally:
        os.close(fd)  # (drops the lock if it was taken)
    return False


def _too_deep(line: str) -> bool:
    # (counting brackets first costs ~nothing; most lines stop there)
    if line.count("[") + line.count("{") <= MAX_DEPTH:
        return False
    from toolrun.boundedjson import too_deep

    return too_deep(line, MAX_DEPTH)


def _write_new(path: Path, data: bytes) -> None:
    """``data`` in a new file at ``path``, put in place whole (written as ``.part``).
    Not fsynced (it may be tens of MB, written from the event loop): after a power cut
    its line may name a file that is short, which reading back reports (its sha256)."""
    part = path.with_name(path.name + ".part")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(part, flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            part.unlink()
        raise
    os.close(fd)
    os.replace(part, path)


class Journal:
    def __init__(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _ignore_in_git(path.parent.parent)
            existed = path.exists()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            _hold(fd)
        except OSError as exc:
            where = exc.filename or path
            raise JournalError(f"cannot create the journal {path}: {where}: {_why(exc)}") from exc
        self.path = path
        self.created = not existed
        self._fd = fd
        # The syncer has its own descriptor, so fsync never holds up a write.
        self._sync_fd = os.dup(self._fd)
        self.failure: str | None = None
        self.records = 0
        self._stored_records = 0
        self._pending: list[bytes] = []  # added, not yet written
        self._dirty = threading.Event()
        self._stop = False
        self._closing = threading.Event()  # cuts the syncer's pause short at close
        self._lock = threading.Lock()
        self._syncer: threading.Thread | None = threading.Thread(
            target=self._sync_loop, name="journal-fsync", daemon=True
        )
        try:
            self._syncer.start()
        except RuntimeError:  # no thread to be had (ulimit -u): each flush syncs itself
            self._syncer = None

    @classmethod
    def for_run(cls, workspace: Path, run_id: str) -> Journal:
        return cls(runs_dir(workspace) / f"{run_id}.jsonl")

    @classmethod
    def start(cls, path: Path, record: dict[str, Any]) -> Journal:
        """A new journal whose first record is already on disk (and synced), or
        :class:`JournalError`: a disk with no room fails here, before anything runs."""
        journal = cls(path)
        journal.write(record)
        if journal.failure is None:
            journal._sync()
        if journal.failure is not None:
            journal.close()
            if journal.created and journal.records == 0:
                with contextlib.suppress(OSError):
                    path.unlink()  # only a file of ours that holds nothing whole
            raise JournalError(journal.failure)
        return journal

    def write(self, record: dict[str, Any]) -> None:
        self.write_line(dumps(record))

    def write_line(self, line: str) -> None:
        """Append one record already serialised as a line of JSON, now (with any
        records added before it)."""
        self.add(line)
        self.flush()

    def add(self, line: str) -> None:
        """Queue one record (a line of JSON) for the next :meth:`flush`; a record too long
        or too deep for a line is stored beside the journal first (see the module)."""
        data = encode_line(line)
        if len(data) > MAX_LINE_BYTES or _too_deep(line):
            data = encode_line(self._store_record(line, data))
        with self._lock:
            self._pending.append(data)

    def _store_record(self, line: str, data: bytes) -> str:
        """The line that stands for a record kept whole in a file beside the journal."""
        from toolrun.execution.journal_records import kept_fields, record_name

        with self._lock:
            self._stored_records += 1
            number = self._stored_records
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            record = {}
        if not isinstance(record, dict):
            record = {}
        kept = kept_fields(record, KEPT_FIELD_BYTES)
        body = data[:-1]  # the record's JSON, without its newline
        name = record_name(record, number)
        try:
            folder = stored_outputs_dir(self.path)
            folder.mkdir(exist_ok=True)
            _write_new(folder / name, body)
        except OSError as exc:
            kept["stored_record_error"] = (
                f"the record ({len(body)} bytes) could not be stored beside the journal: "
                f"{_why(exc)}; only these fields are kept"
            )
        else:
            kept["stored_record"] = {
                "path": name,
                "bytes": len(body),
                "sha256": hashlib.sha256(body).hexdigest(),
            }
        return dumps(kept)

    def flush(self) -> None:
        """Write the queued records, in order, with one ``write(2)``.

        Never raises: after a failed write the journal stops (a later record appended
        to a torn one would corrupt both) and :attr:`failure` says why.
        """
        if not self._pending:
            return
        with self._lock:
            records, self._pending = self._pending, []
            if self.failure is not None or self._fd < 0:
                return
            data = records[0] if len(records) == 1 else b"".join(records)
            # O_APPEND + a single write keeps records whole even if a reader tails the file.
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError as exc:
                # the records written whole before the failure count; one cut short is torn
                left = len(data) - len(view)
                for record in records:
                    if left < len(record):
                        break
                    left -= len(record)
                    self.records += 1
                self._fail(exc, torn=left > 0)
                return
            self.records += len(records)
        if self._syncer is None:
            self._sync()
        elif not self._dirty.is_set():  # set() takes a lock even when it is set already
            self._dirty.set()

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def _fail(self, exc: OSError, *, torn: bool = False) -> None:
        if self.failure is None:
            tail = "; its last record is torn" if torn else ""
            self.failure = (
                f"journal {self.path}: write failed after {self.records} records: "
                f"{_why(exc)}{tail}; later records are not in it"
            )

    def _sync(self) -> None:
        try:
            os.fsync(self._sync_fd)
        except OSError as exc:
            with self._lock:
                self._fail(exc)

    def _sync_loop(self) -> None:
        while True:
            self._dirty.wait()
            self._dirty.clear()
            if self._stop:
                return
            self._sync()
            # fsync holds the inode lock that write() needs; pausing between passes keeps
            # writers from queueing behind it while a burst of results comes in. close()
            # ends the pause at once (it syncs one last time itself).
            if self._closing.wait(SYNC_INTERVAL_S):
                return

    def close(self) -> None:
        if self._fd < 0:
            return
        self.flush()
        self._stop = True
        self._closing.set()
        self._dirty.set()
        if self._syncer is not None:
            self._syncer.join(timeout=5)
        self._sync()
        with self._lock:
            for fd in (self._fd, self._sync_fd):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._fd = self._sync_fd = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
