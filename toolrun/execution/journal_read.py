"""Reading a journal back (``.toolrun/runs/<run-id>.jsonl``), a line at a time.

Beside the writer (:mod:`toolrun.execution.journal`), below every command that reads
runs (``runs``, ``show``) and the hook's session journal (:mod:`toolrun.live.session`),
which finds its run's start here. Lines are read as the journal writes them: JSON nested
at most ``MAX_DEPTH`` deep (a deeper line is a bad line, not a crash); a line that is not
a record toolrun wrote (not UTF-8, not a JSON object, a field of the wrong type) is
skipped and counted; a last line without its newline is a *torn* record. Lines up to 64
MiB are read: older journals wrote longer lines than today's ``MAX_LINE_BYTES``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolrun import boundedjson
from toolrun.execution.journal import MAX_DEPTH, stored_outputs_dir

Record = dict[str, Any]


#: the longest line read: what older journals could hold (today's lines are shorter)
MAX_LINE_BYTES = 64 * 1024 * 1024


def _decode(raw: bytes) -> Any:
    """A line's JSON, or None when it is not UTF-8, not JSON, or nested too deep."""
    try:
        return boundedjson.loads(raw, max_depth=MAX_DEPTH)
    except ValueError:
        return None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _optional(check: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: value is None or check(value)


def _is_str(value: object) -> bool:
    return isinstance(value, str)


def _is_str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# The fields each kind of record must have, and those it may have, with their types.
_REQUIRED: dict[str, dict[str, Callable[[object], bool]]] = {
    "started": {"index": _is_int, "id": _is_str, "execution_id": _is_str},
    "result": {"index": _is_int, "id": _is_str, "status": _is_str},
}


_CALL_FIELDS: dict[str, Callable[[object], bool]] = {
    "execution_id": _is_str,
    "tool": _is_str,
    "plan": _is_str,
    "started_at": _optional(_is_str),
    "decision": _optional(_is_str),
    "duration_ms": _optional(_is_number),
    "input": lambda v: isinstance(v, dict),
    "original_input": lambda v: isinstance(v, dict),
    "decided_by": _optional(lambda v: isinstance(v, dict)),
    "hooks": lambda v: isinstance(v, list) and all(isinstance(h, dict) for h in v),
    "output": _optional(_is_str),
    "error": _optional(_is_str),
    "runs_in": _optional(_is_str),
    "runs_in_why": _optional(_is_str),
}


_OPTIONAL: dict[str, dict[str, Callable[[object], bool]]] = {
    "run": {"started_at": _optional(_is_number), "plans": _is_str_list, "run_id": _is_str},
    "end": {
        "wall_ms": _optional(_is_number),
        "interrupted": lambda v: isinstance(v, bool),
        "unread_lines": _is_int,
        "enforced": _optional(lambda v: isinstance(v, bool)),
        "enforced_reason": _optional(_is_str),
    },
    "started": _CALL_FIELDS,
    "result": _CALL_FIELDS,
}


def valid_record(record: object) -> bool:
    """A record toolrun could have written: a JSON object with an event name and, for
    the events `runs` and `show` read, fields of the right types."""
    if not isinstance(record, dict) or not isinstance(record.get("event"), str):
        return False
    event = record["event"]
    for key, check in _REQUIRED.get(event, {}).items():
        if not check(record.get(key)):
            return False
    return all(
        check(record[key]) for key, check in _OPTIONAL.get(event, {}).items() if key in record
    )


@dataclass
class ReadStats:
    """What a pass over a journal found besides its records."""

    bad_lines: int = 0
    torn: bool = False


def read_records(
    path: Path, stats: ReadStats | None = None, *, whole: bool = False
) -> Iterator[Record]:
    """The valid records of one journal, in order, a line at a time. ``whole``: a record
    stored beside the journal is read from its file (else its line is given as it is)."""
    stats = stats if stats is not None else ReadStats()
    folder = stored_outputs_dir(path)
    with path.open("rb") as fh:
        while raw := fh.readline(MAX_LINE_BYTES):
            if not raw.endswith(b"\n") and len(raw) == MAX_LINE_BYTES:
                # no record is this long (a file that is not a journal): skip to its end
                while raw and not raw.endswith(b"\n"):
                    raw = fh.readline(MAX_LINE_BYTES)
                stats.bad_lines += 1
                continue
            record = _decode(raw)
            if not raw.endswith(b"\n") and raw.strip():
                # the last line, cut off: even when what is left parses, it is not whole
                stats.torn = True
                return
            if whole and isinstance(record, dict) and "stored_record" in record:
                from toolrun.execution.journal_records import load_stored

                record = load_stored(folder, record)
            if not valid_record(record):
                if raw.strip():
                    stats.bad_lines += 1
                continue
            yield record


def first_record(path: Path) -> Record | None:
    """The run record a journal starts with, read without reading the rest."""
    with path.open("rb") as fh:
        line = fh.readline(MAX_LINE_BYTES)
    record = _decode(line)
    return record if valid_record(record) and record.get("event") == "run" else None


#: how far back from a journal's end its end record is looked for
END_TAIL_BYTES = 1 << 16


def last_record(path: Path) -> Record | None:
    """The end record a finished journal ends with, read without reading the rest (the
    header of `show` needs it before the results are listed)."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - END_TAIL_BYTES))
            tail = fh.read()
    except OSError:
        return None
    record = _decode(tail.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    return record if valid_record(record) and record.get("event") == "end" else None

