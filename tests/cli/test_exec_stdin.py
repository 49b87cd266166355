"""`exec -` on a real toolrun process and a real pipe: lines that arrive together become
one turn, and duplicate ids are still found however the ids are kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ALLOW = "permissions:\n  allow: [Bash, Read]\n"


def run_stdin(
    ws: Path, lines: list[dict[str, Any]], *args: str
) -> subprocess.CompletedProcess[str]:
    (ws / "toolrun.yaml").write_text(ALLOW)
    text = "".join(json.dumps(line) + "\n" for line in lines)
    return subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "-", "--format", "jsonl", *args],
        cwd=ws,
        input=text,  # one write into the pipe: every line is there at the first read
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_lines_waiting_together_are_one_turn(tmp_path: Path) -> None:
    calls = [{"tool": "Bash", "input": {"command": f"echo {i}"}} for i in range(40)]
    done = run_stdin(tmp_path, calls, "--dry-run")
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["index"] for r in results] == list(range(40))
    # one turn, one concurrent run: not a turn (and a barrier) per line
    assert {(r["metadata"]["turn"], r["metadata"]["run"]) for r in results} == {(1, 1)}


def test_an_auto_id_taken_earlier_by_hand_is_a_duplicate(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    read = {"tool": "Read", "input": {"file_path": "a.txt"}}
    done = run_stdin(tmp_path, [{**read, "id": "call-3"}, read, read, read])
    assert done.returncode == 3, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["status"] for r in results] == ["ok", "ok", "error"]
    assert results[2]["error"] == "-:3:1: id: duplicate id 'call-3' (first used at -:1:1)"


def test_ids_that_only_look_like_auto_ids_are_their_own(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    read = {"tool": "Read", "input": {"file_path": "a.txt"}}
    lines = [
        {**read, "id": "call-\u0663"},  # an Arabic-Indic 3: not call-3
        {**read, "id": "call-03"},
        {**read, "id": "call-99999999999999999"},  # far ahead: kept as it is
        read,  # call-4
        {**read, "id": "call-99999999999999999"},
    ]
    done = run_stdin(tmp_path, lines)
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["status"] for r in results] == ["ok", "ok", "ok", "ok", "error"]
    assert [r["id"] for r in results[:4]] == [
        "call-\u0663", "call-03", "call-99999999999999999", "call-4"
    ]
    assert "duplicate id 'call-99999999999999999' (first used at -:3:1)" in results[4]["error"]


def test_a_stream_keeps_no_results_but_counts_them_all(tmp_path: Path) -> None:
    from io import BytesIO

    from toolrun.commands.exec import ExecRequest, execute
    from toolrun.execution.results import Status

    (tmp_path / "toolrun.yaml").write_text(ALLOW + "  deny: ['Bash(rm *)']\n")
    lines = [
        {"tool": "Bash", "input": {"command": "echo kept"}},
        {"tool": "Bash", "input": {"command": "rm -rf nothing"}},
        {"tool": "Bash", "input": {"command": "exit 2"}},
    ]
    stdin = BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode())
    shown: list[str] = []
    report = execute(
        ExecRequest(plans=[Path("-")], workspace=tmp_path, keep_results=False),
        on_result=lambda r: shown.append(str(r.status)),
        stdin=stdin,
    )
    assert shown == ["ok", "denied", "error"]  # every result reached the sink
    assert report.all_results == () and report.results == ((),)
    assert report.tally.counts == {Status.OK: 1, Status.DENIED: 1, Status.ERROR: 1}
    assert int(report.exit_code) == 4  # denied outranks failed, as with results kept


def test_the_text_recap_of_a_stream_counts_every_result(tmp_path: Path) -> None:
    lines = [{"tool": "Bash", "input": {"command": f"exit {i % 2}"}} for i in range(5)]
    done = run_stdin(tmp_path, lines, "--format", "text")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[-1].startswith("3 ok · 2 failed in ")
