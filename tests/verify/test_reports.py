"""AutoVerify in ``exec --format github`` and ``--format junit``: annotations on the
diagnostics' own files and lines."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.verify.conftest import RUFF, config, edit, fake, plan, run_text
from toolrun.cli import main

SOURCE = "import sys\n\n\ndef f():\n    return sys.argv\n"


@pytest.fixture
def two_edits(ws: Path) -> Path:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text(SOURCE)
    (ws / "b.txt").write_text("b\n")
    (ws / ".git").mkdir()  # annotations are relative to the repository's root
    plan(ws, edit("src/a.py", "import sys\n", "import sys\nimport os\n"),
         edit("b.txt", "b", "c"))
    return ws


def test_github_annotates_each_diagnostic_on_its_file_and_line(
    two_edits: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = two_edits
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json"},
           {"name": "boom", "files": ["*.txt"], "command": fake(ws, "crash")})
    code, out = run_text("--format", "github")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == (
        "::error file=src/a.py,line=2,col=8,title=ruff F401 (after Edit call-1)::"
        "`os` imported but unused"
    )
    assert lines[1].startswith("::warning file=plan.json,line=1,title=toolrun autoVerify%3A "
                               "boom after call-2::verifier boom failed: exit code 1: Traceback")
    assert lines[-1].startswith("2 ok in ")


def test_github_paths_follow_github_workspace(
    two_edits: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = two_edits
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ws.parent))
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json",
                "block": True})
    code, out = run_text("--format", "github")
    assert code == 1
    first, second = out.splitlines()[:2]
    assert first.startswith("::error file=ws/plan.json,line=1,col=12,title=toolrun%3A Edit call")
    assert second.startswith("::error file=ws/src/a.py,line=2,col=8,title=ruff F401")


def test_junit_has_a_case_per_verifier_report_failing_only_when_it_blocks(
    two_edits: Path,
) -> None:
    ws = two_edits
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json"})
    code, out = run_text("--format", "junit")
    suite = ET.fromstring(out).find("testsuite")
    assert suite is not None and code == 0
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["call-1 Edit", "call-1 verify ruff", "call-2 Edit"]
    verify = cases["call-1 verify ruff"]
    assert (verify.get("file"), verify.get("line")) == ("src/a.py", "2")
    assert verify.find("failure") is None
    assert "src/a.py:2:8: error F401 `os` imported but unused" in (verify.findtext("system-out") or "")

    (ws / "src" / "a.py").write_text(SOURCE)
    (ws / "b.txt").write_text("b\n")
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json",
                "block": True})
    code, out = run_text("--format", "junit")
    suite = ET.fromstring(out).find("testsuite")
    assert suite is not None and code == 1
    assert (suite.get("tests"), suite.get("failures")) == ("3", "2")  # the call and its verifier
    failure = suite.find("testcase[@name='call-1 verify ruff']/failure")
    assert failure is not None and failure.get("type") == "verify"
    assert "src/a.py:2:8: error F401" in (failure.text or "")


def test_junit_reports_a_verifier_that_timed_out_as_an_error(ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    config(ws, {"name": "slow", "files": ["*.txt"], "command": "sleep 30", "timeout": 0.3})
    plan(ws, edit("a.txt", "x", "y"))
    code, out = run_text("--format", "junit")
    suite = ET.fromstring(out).find("testsuite")
    assert suite is not None and code == 0
    error = suite.find("testcase[@name='call-1 verify slow']/error")
    assert error is not None and error.get("type") == "timeout"


def test_runs_show_lists_the_diagnostics_of_a_call_and_notes_them_in_the_run(
    two_edits: Path,
) -> None:
    ws = two_edits
    config(ws, {"name": "ruff", "files": ["*.py"], "command": RUFF, "format": "json"})
    run_text()
    call = CliRunner().invoke(main, ["show", "last", "call-1"]).stdout
    assert "verify:    ruff src/a.py:2:8: error F401 `os` imported but unused" in call
    listing = CliRunner().invoke(main, ["show", "last"]).stdout
    assert "verify: ruff 1 (src/a.py:2:8 F401)" in listing
