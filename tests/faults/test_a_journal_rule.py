"""#27 item 4: what the journal writes, it can read back. A record longer than a line may
be (``MAX_LINE_BYTES``) or nested deeper (``MAX_DEPTH``) is kept whole beside the journal
and its line says where: a 65 MiB Write is in ``show``, a 50 MB Edit has its result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.faults.support_a import toolrun, write_plan
from toolrun.execution.journal import MAX_DEPTH, MAX_LINE_BYTES, Journal, encode_line
from toolrun.execution.journal_read import read_records

MIB = 1024 * 1024


def run_folder(ws: Path) -> tuple[Path, Path]:
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    return journal, journal.with_suffix("")


def lines_fit(journal: Path) -> None:
    for line in journal.read_bytes().splitlines(keepends=True):
        assert len(line) <= MAX_LINE_BYTES


def test_a_65_mib_write_is_in_show_with_its_whole_input(tmp_path: Path) -> None:
    content = ("x" * 99 + "\n") * (65 * MIB // 100 + 10)
    write_plan(tmp_path, [{"id": "big", "tool": "Write", "input": {"file_path": "big.txt", "content": content}}])
    done = toolrun(tmp_path, "exec", "plan.json", "--mode", "acceptEdits", timeout=300)
    assert done.returncode == 0, done.stderr
    journal, folder = run_folder(tmp_path)
    lines_fit(journal)
    assert len(list(folder.glob("*.record.json"))) == 2  # its started and result records
    shown = toolrun(tmp_path, "show", "last")
    assert "big" in shown.stdout and " ok " in shown.stdout and "not records" not in shown.stdout
    (record,) = (r for r in read_records(journal, whole=True) if r["event"] == "result")
    assert record["input"]["content"] == content and record["status"] == "ok"


def test_a_50_mb_edit_shows_its_result_not_started_without_one(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(100)))
    new = "y" * 50_000_000
    write_plan(tmp_path, [{"id": "e", "tool": "Edit", "input": {"file_path": "big.txt", "old_string": "line 7\n", "new_string": new}}])
    done = toolrun(tmp_path, "exec", "plan.json", "--mode", "acceptEdits", timeout=300)
    assert done.returncode == 0, done.stderr
    journal, _ = run_folder(tmp_path)
    lines_fit(journal)
    shown = toolrun(tmp_path, "show", "last").stdout
    assert "started, no result" not in shown and " ok " in shown
    one = toolrun(tmp_path, "show", "last", "e").stdout
    assert one.startswith("e  Edit  ok") and "Edited" in one


@pytest.mark.parametrize(
    "calls",
    [
        # a Write just over the line limit (older toolrun kept it on one line)
        [{"id": "w", "tool": "Write", "input": {"file_path": "a.txt", "content": "a" * (MAX_LINE_BYTES + 10)}}],
        # a MultiEdit whose edits are long
        [{"id": "w", "tool": "MultiEdit", "input": {"file_path": "a.txt", "edits": [
            {"old_string": "", "new_string": "b" * (MAX_LINE_BYTES + 10)}]}}],
        # text that takes more bytes than characters (UTF-8)
        [{"id": "w", "tool": "Write", "input": {"file_path": "a.txt", "content": "é" * (MAX_LINE_BYTES // 2 + 10)}}],
    ],
    ids=["write", "multiedit", "utf8"],
)
def test_a_records_over_a_line_are_stored_beside_and_read_back(tmp_path: Path, calls: list[dict[str, object]]) -> None:
    write_plan(tmp_path, calls)
    assert toolrun(tmp_path, "exec", "plan.json", "--mode", "acceptEdits").returncode == 0
    journal, _ = run_folder(tmp_path)
    lines_fit(journal)
    one = toolrun(tmp_path, "show", "last", "w")
    assert one.returncode == 0 and " ok" in one.stdout.splitlines()[0]
    assert "record:" not in one.stdout
    (result,) = (r for r in read_records(journal, whole=True) if r["event"] == "result")
    assert result["input"] == calls[0]["input"]


def test_a_a_stored_record_that_is_gone_or_altered_is_said_so(tmp_path: Path) -> None:
    write_plan(tmp_path, [{"id": "w", "tool": "Write", "input": {"file_path": "a.txt", "content": "a" * (MAX_LINE_BYTES + 1)}}])
    assert toolrun(tmp_path, "exec", "plan.json", "--mode", "acceptEdits").returncode == 0
    _, folder = run_folder(tmp_path)
    started, result = sorted(folder.glob("*.record.json"), key=lambda p: "result" in p.name)
    result.write_bytes(result.read_bytes().replace(b"aaaa", b"bbbb", 1))
    started.unlink()
    one = toolrun(tmp_path, "show", "last", "w")
    assert one.returncode == 0
    assert "record:" in one.stdout and "altered" in one.stdout
    table = toolrun(tmp_path, "show", "last").stdout
    assert "altered" in table and " ok " in table  # the line's own fields still show


def test_a_a_record_nested_deeper_than_a_line_may_is_stored_and_read_back(tmp_path: Path) -> None:
    deep: object = "bottom"
    for _ in range(MAX_DEPTH + 50):
        deep = {"d": deep}
    path = tmp_path / "runs" / "r.jsonl"
    journal = Journal(path)
    record = {"event": "result", "index": 0, "id": "c", "execution_id": "exec_1", "status": "ok", "metadata": deep}
    journal.write({"event": "run", "run_id": "r"})
    journal.write_line(json.dumps(record))
    journal.close()
    lines = path.read_bytes().splitlines(keepends=True)
    assert all(len(line) < 2000 for line in lines)
    assert [r for r in read_records(path, whole=True) if r["event"] == "result"] == [record]
    # the line alone (what `runs` counts) has the record's small fields
    (line,) = (r for r in read_records(path) if r["event"] == "result")
    assert line["status"] == "ok" and "metadata" not in line and "stored_record" in line
    assert len(encode_line(json.dumps(line))) < 2000
