from __future__ import annotations

import json
from pathlib import Path

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
