"""Records too long or too deep for a journal line (see :mod:`toolrun.execution.journal`):
what their line keeps, the file that holds them whole, and reading that file back.

Reading trusts nothing in the line: the name must be a plain file name in the run's
folder, the file a regular file (not a link) of the recorded size whose sha256 matches,
and what it holds a record of the same event and execution id as its line.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Any

from toolrun.execution.results import encode_json

Record = dict[str, Any]
#: a stored record decodes as deep as the encoder could write it (past that: unreadable)
STORED_MAX_DEPTH = 100_000
#: a stored record's file name: a plain name in the run's folder
RECORD_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.record\.json")


def kept_fields(record: Record, limit: int) -> Record:
    """The fields of ``record`` whose JSON is at most ``limit`` bytes, in order."""
    kept: Record = {}
    for key, value in record.items():
        if isinstance(value, str) and len(value) > limit:
            continue
        if isinstance(value, dict | list):
            try:
                if len(encode_json(value)) > limit:
                    continue
            except (ValueError, RecursionError):
                continue
        kept[key] = value
    if not isinstance(kept.get("event"), str):
        kept["event"] = "unknown"
    return kept


def record_name(record: Record, number: int) -> str:
    """The stored record's file name: its execution id and event when it has them."""
    event, execution = record.get("event"), record.get("execution_id")
    safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in f"{execution}.{event}")
    if isinstance(event, str) and isinstance(execution, str) and safe[:1].isalnum():
        return f"{safe}.{number}.record.json"
    return f"record-{number}.record.json"


def load_stored(folder: Path, line: Record) -> Record:
    """The whole record a journal line stands for; the line itself with
    ``stored_record_error`` (why) when its file is gone or is not what the line says."""
    from toolrun import boundedjson
    from toolrun.errors import UntrustedJSONError

    stored = line.get("stored_record")
    name = stored.get("path") if isinstance(stored, dict) else None
    size = stored.get("bytes") if isinstance(stored, dict) else None
    digest = stored.get("sha256") if isinstance(stored, dict) else None
    if not isinstance(name, str) or RECORD_NAME.fullmatch(name) is None:
        return _unread(line, f"the stored record's name {name!r} is not a file in the run's folder")
    path = folder / name
    try:
        if folder.is_symlink():
            raise OSError(f"{folder} is a symbolic link")
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size != size:
                return _unread(line, f"{path}: not the stored record its line names (size)")
            data = fh.read()
    except OSError as exc:
        return _unread(line, f"{path}: {exc.strerror or exc}")
    if hashlib.sha256(data).hexdigest() != digest:
        return _unread(line, f"{path}: altered (its sha256 is not the one its line records)")
    try:
        record = boundedjson.loads(data, max_depth=STORED_MAX_DEPTH)
    except UntrustedJSONError as exc:
        return _unread(line, f"{path}: {exc}")
    if (
        not isinstance(record, dict)
        or record.get("event") != line.get("event")
        or record.get("execution_id") != line.get("execution_id")
    ):
        return _unread(line, f"{path}: not the record its line stands for")
    return record


def _unread(line: Record, why: str) -> Record:
    return {**line, "stored_record_error": why}
