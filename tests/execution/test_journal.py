from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolrun.errors import JournalError
from toolrun.execution.journal import Journal, new_run_id, runs_dir


def test_run_ids_sort_by_time_and_are_unique() -> None:
    ids = {new_run_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(len(i) == len("20261129T190312Z-3f9a1c") for i in ids)


def test_records_are_written_immediately_one_per_line(tmp_path: Path) -> None:
    journal = Journal.for_run(tmp_path, "r1")
    assert journal.path == runs_dir(tmp_path) / "r1.jsonl"
    journal.write({"event": "result", "index": 0, "output": "ünïcode"})
    # readable before close: a crash after this line loses nothing
    assert json.loads(journal.path.read_text()) == {
        "event": "result",
        "index": 0,
        "output": "ünïcode",
    }
    for i in range(1, 200):
        journal.write({"event": "result", "index": i})
    journal.close()
    journal.close()  # idempotent
    lines = journal.path.read_text().splitlines()
    assert [json.loads(line)["index"] for line in lines] == list(range(200))


def test_journal_appends_to_an_existing_run(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.jsonl") as j:
        j.write({"a": 1})
    with Journal(tmp_path / "j.jsonl") as j:
        j.write({"a": 2})
    assert (tmp_path / "j.jsonl").read_text() == '{"a": 1}\n{"a": 2}\n'


def test_the_toolrun_folder_keeps_itself_out_of_git(tmp_path: Path) -> None:
    Journal.for_run(tmp_path, "r").close()
    assert (tmp_path / ".toolrun" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_a_journal_that_cannot_take_its_first_record_is_an_error_naming_it() -> None:
    # /dev/full: every write fails with ENOSPC, as on a full disk
    with pytest.raises(JournalError, match=r"/dev/full.*No space left on device"):
        Journal.start(Path("/dev/full"), {"event": "run"})
    assert Path("/dev/full").exists()  # not ours: never removed


def test_a_journal_that_cannot_be_created_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / ".toolrun").write_text("a file where the folder should be")
    with pytest.raises(JournalError, match=r"cannot create the journal .*\.toolrun"):
        Journal.for_run(tmp_path, "r")


def test_a_failed_write_stops_the_journal_without_raising(tmp_path: Path) -> None:
    journal = Journal(Path("/dev/full"))
    journal.write({"event": "result", "index": 0})
    journal.write({"event": "result", "index": 1})
    assert journal.failure is not None
    assert "write failed after 0 records: No space left on device" in journal.failure
    journal.close()


def test_text_that_is_not_utf8_is_escaped_and_reads_back(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.jsonl") as j:
        j.write({"cwd": "/tmp/d\udcff", "lone": "\ud800"})
    data = (tmp_path / "j.jsonl").read_bytes()
    assert data.decode("utf-8") == '{"cwd": "/tmp/d\\udcff", "lone": "\\ud800"}\n'
    assert json.loads(data) == {"cwd": "/tmp/d\udcff", "lone": "\ud800"}


def test_added_records_reach_the_file_in_order_at_the_next_flush_or_write(
    tmp_path: Path,
) -> None:
    with Journal(tmp_path / "j.jsonl") as j:
        j.add('{"a": 1}')
        j.add('{"a": 2}')
        assert (tmp_path / "j.jsonl").read_text() == ""  # queued, not yet written
        j.flush()
        assert (tmp_path / "j.jsonl").read_text() == '{"a": 1}\n{"a": 2}\n'
        j.add('{"a": 3}')
        j.write({"a": 4})  # a write takes what was queued before it along
        assert j.records == 4
    assert (tmp_path / "j.jsonl").read_text().splitlines()[2:] == ['{"a": 3}', '{"a": 4}']


def test_records_still_queued_at_close_are_written(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.jsonl")
    journal.add('{"last": true}')
    journal.close()
    assert (tmp_path / "j.jsonl").read_text() == '{"last": true}\n'
