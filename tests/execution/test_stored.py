"""The stored whole output of a call: written as it comes, checked when read back."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolrun.errors import StoredOutputError
from toolrun.stored import OutputStore, StoredOutput, stream_stored

EXEC = "exec_00000000-0000-4000-8000-000000000001"


def store_in(tmp_path: Path, max_bytes: int = 1 << 20) -> OutputStore:
    return OutputStore(tmp_path / "run", "run", EXEC, max_bytes)


def spill(store: OutputStore, *chunks: bytes) -> StoredOutput | None:
    sink = store.open()
    for chunk in chunks:
        sink.write(chunk)
    return sink.close()


def read_back(folder: Path, stored: StoredOutput) -> bytes:
    out = bytearray()
    stream_stored(folder, stored, out.extend)
    return bytes(out)


def test_chunks_become_one_file_named_for_the_call(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    stored = spill(store, b"one\n", b"\xff\xfe not utf-8\n", b"three")
    whole = b"one\n\xff\xfe not utf-8\nthree"
    assert stored == StoredOutput(
        f"{EXEC}.out", len(whole), hashlib.sha256(whole).hexdigest(), None, len(whole)
    )
    assert store.record() == {"stored_output": stored.as_json()}
    assert os.listdir(store.folder) == [f"{EXEC}.out"]  # the .part was renamed
    assert read_back(store.folder, stored) == whole


def test_past_the_cap_bytes_are_counted_not_kept(tmp_path: Path) -> None:
    store = store_in(tmp_path, max_bytes=10)
    stored = spill(store, b"0123456", b"789abcdef", b"ghij")
    assert stored is not None
    assert (stored.bytes, stored.truncated_at, stored.output_bytes) == (10, 10, 20)
    assert read_back(store.folder, stored) == b"0123456789"
    assert stored.cap_note == (
        "the call printed 20 bytes; only the first 10 bytes are stored (toolrun.maxStoredOutput)"
    )


def test_a_cap_of_zero_writes_no_file(tmp_path: Path) -> None:
    store = store_in(tmp_path, max_bytes=0)
    assert spill(store, b"anything") is None
    assert not store.folder.exists()
    assert store.record() == {"stored_output_error": "not stored: toolrun.maxStoredOutput is 0"}


def test_a_file_planted_where_the_spill_goes_is_never_written_through(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    store.folder.mkdir()
    target = tmp_path / "target"
    target.write_text("keep")
    (store.folder / f"{EXEC}.out.part").symlink_to(target)
    assert spill(store, b"x" * 100) is None
    assert target.read_text() == "keep"
    assert "could not be stored" in (store.failure or "")


def test_a_failing_disk_ends_the_spill_not_the_call(tmp_path: Path) -> None:
    """A write that fails (the file size limit here, as a full disk would) leaves no file
    and a reason; the writer goes on accepting output."""
    script = f"""
import resource, signal, sys
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).parents[2])!r})
from toolrun.stored import OutputStore
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))
store = OutputStore(Path({str(tmp_path)!r}) / "run", "run", "exec_x", 1 << 20)
sink = store.open()
for _ in range(10):
    sink.write(b"y" * 20_000)
print(sink.close(), store.failure, sorted(p.name for p in store.folder.iterdir()))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("None the whole output could not be stored in ")
    assert "File too large" in done.stdout and done.stdout.rstrip().endswith("[]")


@pytest.mark.parametrize(
    "record",
    [
        "not a dict",
        {"path": "../x.out", "bytes": 1, "sha256": "0" * 64},
        {"path": "/abs.out", "bytes": 1, "sha256": "0" * 64},
        {"path": "a/b.out", "bytes": 1, "sha256": "0" * 64},
        {"path": ".out", "bytes": 1, "sha256": "0" * 64},
        {"path": "x.out\n", "bytes": 1, "sha256": "0" * 64},
        {"path": "x.out", "bytes": -1, "sha256": "0" * 64},
        {"path": "x.out", "bytes": True, "sha256": "0" * 64},
        {"path": "x.out", "bytes": 1, "sha256": "zz" * 32},
        {"path": "x.out", "bytes": 1, "sha256": "0" * 64, "truncated_at": "10"},
    ],
)
def test_a_record_toolrun_did_not_write_is_refused(record: object) -> None:
    with pytest.raises(StoredOutputError, match="journal.jsonl"):
        StoredOutput.from_json(record, "journal.jsonl")


def test_a_file_changed_while_it_is_written_out_is_caught(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    stored = spill(store, b"a" * 3_000_000)
    assert stored is not None
    path = store.folder / stored.path

    def write(chunk: bytes) -> None:  # someone rewrites the file between two chunks
        with path.open("r+b") as fh:
            fh.seek(2_500_000)
            fh.write(b"b")

    with pytest.raises(StoredOutputError, match="changed while it was read"):
        stream_stored(store.folder, stored, write)
