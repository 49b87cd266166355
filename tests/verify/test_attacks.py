"""A plan names the written files; the verifier command comes from the config. A file
name must reach the verifier as one argument, never as shell text or an option."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.sandbox.conftest import needs_bwrap
from tests.verify.conftest import config, fake, plan, run

NAMES = [
    "$(touch pwned1).txt",
    "a;touch pwned2;.txt",
    "`touch pwned3`.txt",
    "x' ; touch pwned4 ; '.txt",
    "-rf.txt",
    "--output=pwned5.txt",
    "new\nline.txt",
    "{files}.txt",
    "sp ace.txt",
]


def test_written_file_names_reach_the_verifier_as_plain_arguments(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv_file = ws.parent / "argv.json"
    monkeypatch.setenv("ARGV_FILE", str(argv_file))
    config(ws, {"name": "rec", "files": ["*.txt"], "command": fake(ws, "argv")})
    for name in NAMES:
        plan(ws, {"tool": "Write", "input": {"file_path": name, "content": "x\n"}})
        code, (r,) = run()
        assert (code, r["status"], r["verify"][0]["status"]) == (0, "ok", "ok"), name
        given = json.loads(argv_file.read_text())
        assert given == [f"./{name}" if name.startswith("-") else name], name
        assert (ws / given[0]).read_text() == "x\n"
    made = [p.name for p in (*ws.iterdir(), *ws.parent.iterdir())]
    assert [name for name in made if re.fullmatch(r"pwned\d", name)] == []


def test_a_plan_cannot_point_a_verifier_outside_the_workspace(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write outside the workspace (approved by an allow rule for it) is not verified:
    patterns are relative to the workspace, and ``..`` or an absolute path never match."""
    outside = ws.parent / "elsewhere.txt"
    monkeypatch.setenv("ARGV_FILE", str(ws.parent / "argv.json"))
    config(ws, {"name": "rec", "files": ["*.txt", "**", "/**"], "command": fake(ws, "argv")},
           extra=f"  additionalDirectories: ['{ws.parent}']\n")
    for spelled in (str(outside), "../elsewhere.txt", "./../elsewhere.txt"):
        plan(ws, {"tool": "Write", "input": {"file_path": spelled, "content": "x\n"}})
        code, (r,) = run("--mode", "acceptEdits")
        assert (code, r["status"]) == (0, "ok")
        assert "verify" not in r
    assert not (ws.parent / "argv.json").exists()


@needs_bwrap
def test_with_the_sandbox_on_a_verifier_runs_inside_it(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = ws.parent / "outside.txt"
    monkeypatch.setenv("OUTSIDE", str(outside))
    config(ws, {"name": "esc", "files": ["*.txt"], "command": fake(ws, "escape")},
           extra="sandbox:\n  enabled: true\n")
    plan(ws, {"tool": "Write", "input": {"file_path": "a.txt", "content": "x\n"}})
    code, (r,) = run()
    assert (code, r["status"]) == (0, "ok")
    (d,) = r["verify"][0]["diagnostics"]
    assert d["message"] == "cannot write outside: Read-only file system"
    assert not outside.exists()
    # the same verifier with the sandbox off: the write outside succeeds (what it guards)
    config(ws, {"name": "esc", "files": ["*.txt"], "command": fake(ws, "escape")})
    run()
    assert outside.read_text() == "escaped"


def test_sandbox_on_but_unavailable_the_report_says_it_ran_unsandboxed(ws: Path) -> None:
    config(ws, {"name": "echo", "files": ["*.txt"], "command": "true {files}"},
           extra="sandbox:\n  enabled: true\n  bwrapPath: /nonexistent/bwrap\n")
    plan(ws, {"tool": "Write", "input": {"file_path": "a.txt", "content": "x\n"}})
    code, (r,) = run()
    (report,) = r["verify"]
    assert (code, report["status"]) == (0, "ok")
    assert report["message"].startswith("ran unsandboxed: ")
    assert "/nonexistent/bwrap" in report["message"]


def test_sandbox_on_unavailable_and_required_the_verifier_fails_closed(ws: Path) -> None:
    marker = ws.parent / "ran"
    config(ws, {"name": "touch", "files": ["*.txt"], "command": f"touch {marker}"},
           extra="sandbox:\n  enabled: true\n  failIfUnavailable: true\n"
                 "  bwrapPath: /nonexistent/bwrap\n")
    plan(ws, {"tool": "Write", "input": {"file_path": "a.txt", "content": "x\n"}})
    code, (r,) = run()
    (report,) = r["verify"]
    assert (code, r["status"], report["status"]) == (0, "ok", "failed")
    assert "failIfUnavailable" in report["message"]
    assert not marker.exists()
