"""Execution ids and result timestamps, made without the stdlib objects, read the same."""

from __future__ import annotations

import math
import random
import uuid
from datetime import UTC, datetime

import pytest

from toolrun.execution import executor
from toolrun.execution.results import utc_iso


def reference(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_execution_ids_are_the_text_of_a_version_4_uuid(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(17)
    for bits in [0, (1 << 128) - 1, *(rng.getrandbits(128) for _ in range(2000))]:
        monkeypatch.setattr(executor._ids, "getrandbits", lambda n, bits=bits: bits)
        made = executor.new_execution_id()
        assert made == f"exec_{uuid.UUID(int=bits, version=4)}"
        assert uuid.UUID(made.removeprefix("exec_")).version == 4


def test_timestamps_read_as_datetime_words_them() -> None:
    rng = random.Random(5)
    stamps = [rng.uniform(0, 4e9) for _ in range(5000)]
    # the edges of rounding to the microsecond (half to even) and to the next second
    stamps += [0.0, 0.0005, 0.9995, 0.9999995, 1.9999999, 1e9 + 0.0000005, 1e9 + 0.9999996]
    stamps += [1_700_000_000 + k / 1000 for k in range(2000)]
    for ts in stamps:
        assert utc_iso(ts) == reference(ts), ts
    assert utc_iso(None) is None


def test_timestamps_datetime_refuses_are_refused_alike() -> None:
    for ts in (-1.5, 1e20, math.inf, math.nan):
        try:
            expected: str | type[BaseException] = reference(ts)
        except (OverflowError, ValueError, OSError) as exc:
            expected = type(exc)
        if isinstance(expected, str):
            assert utc_iso(ts) == expected
        else:
            with pytest.raises(expected):
                utc_iso(ts)


def test_a_forked_process_makes_ids_of_its_own() -> None:
    # check's part processes are forks: a copy of the parent's generator would give the
    # parent's next ids again
    import os

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.write(write, executor.new_execution_id().encode())
        os._exit(0)
    os.close(write)
    mine = executor.new_execution_id()
    with os.fdopen(read, "rb") as child:
        theirs = child.read().decode()
    os.waitpid(pid, 0)
    assert theirs.startswith("exec_") and theirs != mine


def test_a_stamp_formatted_again_reads_the_same_and_a_new_one_is_not_taken_for_it() -> None:
    # (a call's start is formatted twice: in its "started" record and in its result)
    for ts in (1_700_000_000.25, 1_700_000_000.25, 1_700_000_000.2504, 0.0, 0.0, 1e9 + 0.9999996):
        assert utc_iso(ts) == reference(ts)
    utc_iso(1.5)
    assert utc_iso(-1.0) == reference(-1.0)  # never answered from the last one
    with pytest.raises(ValueError):
        utc_iso(math.nan)
