"""AutoVerify inside real ``toolrun exec`` runs: real ruff, fake verifiers, real processes."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.cli.processes import spawn
from tests.hooks.conftest import alive, running_with
from tests.verify.conftest import PY, RENDEZVOUS, RUFF, config, edit, fake, plan, run, run_text

SOURCE = "import sys\n\n\ndef f():\n    return sys.argv\n"


def test_an_edit_that_adds_an_unused_import_gets_f401_on_that_line(ws: Path) -> None:
    (ws / "a.py").write_text(SOURCE)
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json"})
    plan(ws, edit("a.py", "import sys\n", "import sys\nimport os\n"))
    code, (r,) = run()
    assert (code, r["status"]) == (0, "ok")  # not blocking: a note, not a failure
    (report,) = r["verify"]
    assert (report["verifier"], report["status"], report["files"]) == ("ruff", "found", ["a.py"])
    assert report["diagnostics"] == [
        {"file": "a.py", "line": 2, "column": 8, "severity": "error", "code": "F401",
         "message": "`os` imported but unused"}
    ]
    assert "verify" not in r.get("metadata", {})  # once, at the top of the result


def test_an_edit_that_adds_no_problem_gets_none(ws: Path) -> None:
    (ws / "a.py").write_text(SOURCE)
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json"})
    plan(ws, edit("a.py", "return sys.argv", "return sys.argv[1:]"))
    code, (r,) = run()
    assert code == 0
    assert [(v["status"], v["diagnostics"]) for v in r["verify"]] == [("ok", [])]


def test_problems_on_lines_the_edit_did_not_touch_are_not_its_own(ws: Path) -> None:
    (ws / "a.py").write_text("import os\n" + SOURCE)  # an unused import already there
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json"})
    plan(ws, edit("a.py", "return sys.argv", "return sys.argv[1:]"),
         edit("a.py", "import sys\n", "import sys\nimport json\n"))
    _, (first, second) = run()
    assert first["verify"][0]["diagnostics"] == []
    assert [d["line"] for d in second["verify"][0]["diagnostics"]] == [3]


def test_block_makes_new_errors_an_error_result_and_exit_1_the_file_is_written(ws: Path) -> None:
    (ws / "a.py").write_text(SOURCE)
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json",
                "block": True})
    plan(ws, edit("a.py", "import sys\n", "import sys\nimport os\n"),
         edit("a.py", "return sys.argv", "return sys.argv[1:]"))
    code, (bad, fine) = run()
    assert code == 1
    assert bad["status"] == "error" and bad["verify"][0]["block"] is True
    assert bad["error"].startswith("autoVerify: 1 new error (ruff: a.py:2:8: F401 ")
    assert "import os" in (ws / "a.py").read_text()
    assert fine["status"] == "ok"


def test_block_ignores_warnings(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("one\n")
    config(ws, {"name": "t", "files": ["*.txt"], "command": fake(ws, "text"), "block": True})
    monkeypatch.setenv("FINDINGS", json.dumps([["a.txt", 2]]))
    plan(ws, edit("a.txt", "one\n", "one\ntwo\n"))
    code, (r,) = run()
    assert (code, r["status"]) == (0, "ok")
    assert r["verify"][0]["diagnostics"][0]["severity"] == "warning"


def test_sarif_findings_are_kept_to_written_files_and_touched_lines(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "a.txt").write_text("1\n2\n3\n4\n5\n6\n7\n8\n9\n")
    (ws / "b.txt").write_text("b\n")
    config(ws, {"name": "fake", "files": ["*.txt"], "command": fake(ws, "sarif"),
                "format": "sarif"})
    findings = [["a.txt", 5], ["a.txt", 1], [str(ws / "a.txt"), 6], ["b.txt", 1],
                [(ws / "a.txt").as_uri(), 5]]
    monkeypatch.setenv("FINDINGS", json.dumps(findings))
    plan(ws, edit("a.txt", "5\n", "five\nsix and a half\n"))
    _, (r,) = run()
    kept = [(d["file"], d["line"], d["code"]) for d in r["verify"][0]["diagnostics"]]
    assert kept == [("a.txt", 5, "FAKE1"), ("a.txt", 6, "FAKE1"), ("a.txt", 5, "FAKE1")]


def test_text_findings_and_the_short_note_in_text_and_table(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "a.txt").write_text("x\n")
    config(ws, {"name": "lint", "files": ["*.txt"], "command": fake(ws, "text")})
    monkeypatch.setenv("FINDINGS", json.dumps([["a.txt", 2]]))
    plan(ws, edit("a.txt", "x\n", "x\ny\n"))
    _, (r,) = run()
    outputs = []
    for args in ((), ("--format", "table"), ("--verbose",)):
        (ws / "a.txt").write_text("x\n")
        outputs.append(run_text(*args)[1])
    text, table, verbose = outputs
    assert r["verify"][0]["diagnostics"] == [
        {"file": "a.txt", "line": 2, "column": 3, "severity": "warning", "code": "W9",
         "message": "looks odd"}
    ]
    assert "verify: lint 1 (a.txt:2:3 W9)" in text
    assert "verify: lint 1 (a.txt:2:3 W9)" in table
    assert "verify: lint a.txt:2:3: warning W9 looks odd" in verbose


def test_a_verifier_that_hangs_times_out_and_leaves_no_process(ws: Path) -> None:
    marker = f"toolrun-verify-hang-{os.getpid()}-{id(ws)}"
    pids = ws.parent / "pids"
    (ws / "a.txt").write_text("x\n")
    config(ws, {"name": "slow", "files": ["*.txt"], "command": f"MARKER={marker} PIDS={pids} "
                + fake(ws, "hang"), "timeout": 1})
    plan(ws, edit("a.txt", "x", "y"), {"tool": "Read", "input": {"file_path": "a.txt"}})
    code, (r, read) = run()
    assert (code, r["status"]) == (0, "ok")  # the edit's result stands
    (report,) = r["verify"]
    assert (report["status"], report["message"]) == ("timeout", "timed out after 1 s; stopped")
    assert (ws / "a.txt").read_text() == "y\n" and "y" in read["output"]
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 2  # the verifier and the grandchild it started in a new session
    assert [pid for pid in started if alive(pid)] == []
    assert running_with(marker) == []


def test_a_verifier_that_crashes_is_reported_and_hides_nothing(ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    config(ws, {"name": "boom", "files": ["*.txt"], "command": fake(ws, "crash"),
                "block": True})
    plan(ws, edit("a.txt", "x", "y"))
    code, (r,) = run()
    assert (code, r["status"], r["output"]) == (0, "ok", f"Edited {ws / 'a.txt'} (1 replacement)")
    (report,) = r["verify"]
    assert report["status"] == "failed"
    assert report["message"].startswith("exit code 1: Traceback")
    assert report["message"].endswith("RuntimeError: the verifier fell over")


def test_a_verifier_whose_report_does_not_parse_or_cannot_start_fails(ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    config(ws, {"name": "j", "files": ["*.txt"], "command": "echo not json", "format": "json"},
           {"name": "k", "files": ["*.txt"], "command": "/nonexistent/verifier {files}"},
           {"name": "s", "files": ["*.txt"], "command": "kill -9 $$"})
    plan(ws, edit("a.txt", "x", "y"))
    code, (r,) = run()
    assert code == 0
    j, k, s = r["verify"]
    assert j["status"] == "failed" and "is not JSON" in j["message"]
    assert k["status"] == "failed" and k["message"].startswith("exit code 127: ")
    assert (s["status"], s["message"]) == ("failed", "killed by signal 9")


def test_off_unless_configured_and_only_after_successful_writes(ws: Path) -> None:
    (ws / "a.py").write_text(SOURCE)
    config(ws)
    plan(ws, edit("a.py", "import sys\n", "import sys\nimport os\n"))
    _, (r,) = run()
    assert "verify" not in r
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json"})
    plan(ws, edit("a.py", "no such text", "x"), {"tool": "Read", "input": {"file_path": "a.py"}},
         {"tool": "Write", "input": {"file_path": "notes.md", "content": "import os\n"}})
    _, results = run()
    assert [r["status"] for r in results] == ["error", "ok", "ok"]
    assert all("verify" not in r for r in results)  # failed edit, a read, an unmatched file
    _, dry = run("--dry-run")  # nothing is written in a dry run: nothing to verify
    assert [r["status"] for r in dry] == ["skipped"] * 3
    assert all("verify" not in r for r in dry)


def test_multiedit_write_and_applypatch_are_verified_once_per_call(ws: Path) -> None:
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json"})
    (ws / "m.py").write_text("x = 1\n")
    patch = ("*** Begin Patch\n*** Add File: p.py\n+import os\n*** Add File: q.py\n+import re\n"
             "*** End Patch\n")
    plan(
        ws,
        {"tool": "Write", "input": {"file_path": "w.py", "content": "import os\n"}},
        {"tool": "MultiEdit", "input": {"file_path": "m.py", "edits": [
            {"old_string": "x = 1\n", "new_string": "import os\nx = 1\n"}]}},
        {"tool": "ApplyPatch", "input": {"patch": patch}},
    )
    code, results = run()
    assert code == 0
    found = [[(d["file"], d["line"], d["code"]) for d in r["verify"][0]["diagnostics"]]
             for r in results]
    assert found == [[("w.py", 1, "F401")], [("m.py", 1, "F401")],
                     [("p.py", 1, "F401"), ("q.py", 1, "F401")]]
    assert results[2]["verify"][0]["files"] == ["p.py", "q.py"]


def test_the_journal_keeps_the_reports(ws: Path) -> None:
    (ws / "a.py").write_text(SOURCE)
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json"})
    plan(ws, edit("a.py", "import sys\n", "import sys\nimport os\n"))
    run()
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    (result,) = [json.loads(line) for line in journal.read_text().splitlines()
                 if '"event": "result"' in line]
    assert result["verify"][0]["diagnostics"][0]["code"] == "F401"


def test_ctrl_c_while_a_verifier_runs_stops_it_and_keeps_the_edit_result(ws: Path) -> None:
    marker = f"toolrun-verify-int-{os.getpid()}-{id(ws)}"
    pids = ws.parent / "pids"
    (ws / "a.txt").write_text("x\n")
    config(ws, {"name": "slow", "files": ["*.txt"],
                "command": f"MARKER={marker} PIDS={pids} " + fake(ws, "hang")})
    plan(ws, edit("a.txt", "x", "y"), edit("a.txt", "y", "z"))
    proc = spawn(ws, "exec", "plan.json", "--format", "jsonl")
    with proc:
        while not pids.exists() or len(pids.read_text().split()) < 2:  # the event: it runs
            assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["status"] == "ok" and "verify" not in first  # written; its check cut short
    assert second["status"] == "interrupted"
    assert (ws / "a.txt").read_text() == "y\n"
    assert [pid for pid in map(int, pids.read_text().split()) if alive(pid)] == []
    assert running_with(marker) == []


def test_a_flood_of_diagnostics_is_cut_and_counted(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config(ws, {"name": "lint", "files": ["*.txt"], "command": fake(ws, "text")})
    monkeypatch.setenv("FINDINGS", json.dumps([["big.txt", n] for n in range(1, 501)]))
    plan(ws, {"tool": "Write", "input": {"file_path": "big.txt", "content": "x\n" * 500}})
    _, (r,) = run()
    (report,) = r["verify"]
    assert len(report["diagnostics"]) == 200
    assert report["message"] == "300 more diagnostics not shown"


def test_real_mypy_json_after_an_edit_that_breaks_a_type(ws: Path) -> None:
    (ws / "m.py").write_text("def f() -> int:\n    return 1\n\n\nx: int = f()\n")
    mypy = f"{PY} -m mypy -O json --no-incremental --follow-imports=silent {{files}}"
    config(ws, {"name": "mypy", "files": ["*.py"], "command": mypy, "format": "json",
                "timeout": 120})
    plan(ws, edit("m.py", "x: int = f()", "x: str = f()"))
    _, (r,) = run()
    (report,) = r["verify"]
    assert report["status"] == "found", report
    (d,) = report["diagnostics"]
    assert (d["file"], d["line"], d["column"], d["code"]) == ("m.py", 5, 10, "assignment")


def test_the_verifiers_of_one_write_run_at_the_same_time(ws: Path) -> None:
    script = ws.parent / "rendezvous.py"
    script.write_text(RENDEZVOUS)
    flags = ws.parent
    verifiers = [
        {"name": name, "files": ["*.txt"], "timeout": 20,
         "command": f"{PY} {script} {flags / name} {flags / other} {{files}}"}
        for name, other in (("one", "two"), ("two", "one"))
    ]
    config(ws, *verifiers)
    (ws / "a.txt").write_text("x\n")
    plan(ws, edit("a.txt", "x", "y"))
    _, (r,) = run()
    assert [(v["verifier"], v["status"]) for v in r["verify"]] == [("one", "found"), ("two", "found")]


def test_a_report_over_the_cap_is_not_read(ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    flood = "head -c 20000000 /dev/zero | tr '\\0' x; echo"
    config(ws, {"name": "flood", "files": ["*.txt"], "command": flood, "format": "json"})
    plan(ws, edit("a.txt", "x", "y"))
    code, (r,) = run()
    assert (code, r["status"]) == (0, "ok")
    (report,) = r["verify"]
    assert (report["status"], report["message"]) == (
        "failed", "its report is over 16777216 bytes; not read"
    )
