"""`exec --diff` and `show` print what file edits changed; `exec --dry-run --diff` what they
would change, applied in order in memory, with nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main

PLAN = """\
calls:
  - {id: make, tool: Write, input: {file_path: src/app.py, content: "def load():\\n    return 1\\n"}}
  - {id: rename, tool: Edit, input: {file_path: src/app.py, old_string: "def load", new_string: "def read"}}
  - {id: both, tool: MultiEdit, input: {file_path: src/app.py, edits: [{old_string: "return 1", new_string: "return 2"}]}}
  - id: patch
    tool: ApplyPatch
    input:
      patch: |
        *** Begin Patch
        *** Update File: src/app.py
        @@
        -    return 2
        +    return 3
        *** Add File: NOTES.md
        +read() returns 3
        *** End Patch
  - {id: missing, tool: Edit, input: {file_path: src/app.py, old_string: "not there", new_string: "x"}}
  - {id: secret, tool: Write, input: {file_path: .env, content: "TOKEN=1\\n"}}
"""
RULES = 'permissions:\n  defaultMode: acceptEdits\n  deny: ["Edit(./.env)"]\n'


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.yaml").write_text(PLAN)
    (tmp_path / "toolrun.yaml").write_text(RULES)
    return tmp_path


def test_dry_run_diff_applies_the_edits_in_order_in_memory(runner: CliRunner, ws: Path) -> None:
    done = runner.invoke(main, ["exec", "plan.yaml", "--dry-run", "--diff", "--format", "text"])
    out = done.stdout
    assert not (ws / "src").exists() and not (ws / "NOTES.md").exists()  # nothing written
    diffs = out.split("# ")[1:]
    assert [d.split("\n")[0] for d in diffs] == [
        "make Write",
        "rename Edit",
        "both MultiEdit",
        "patch ApplyPatch",
        "missing Edit: would fail: old_string not found in " + str(ws / "src/app.py"),
    ]  # the denied Write has no diff: it would not run
    assert "-def load():\n+def read():\n" in diffs[1]
    assert "-    return 1\n+    return 2\n" in diffs[2]
    assert "-    return 2\n+    return 3\n" in diffs[3]  # on top of the MultiEdit's change
    assert "--- NOTES.md\n+++ NOTES.md\n@@ -0,0 +1 @@\n+read() returns 3\n" in diffs[3]


def test_diff_after_a_real_run_matches_the_files(runner: CliRunner, ws: Path) -> None:
    done = runner.invoke(main, ["exec", "plan.yaml", "--diff", "--format", "text"])
    assert (ws / "src/app.py").read_text() == "def read():\n    return 3\n"
    assert "# patch ApplyPatch\n--- src/app.py\n" in done.stdout
    assert not (ws / ".env").exists()


def test_show_prints_the_diff_of_an_edit(runner: CliRunner, ws: Path) -> None:
    runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    shown = runner.invoke(main, ["show", "last", "rename"])
    assert shown.stdout.endswith(
        "--- src/app.py\n+++ src/app.py\n@@ -1,2 +1,2 @@\n-def load():\n+def read():\n"
        "     return 1\n"
    )


def test_json_results_carry_the_structured_patch(runner: CliRunner, ws: Path) -> None:
    import json

    done = runner.invoke(main, ["exec", "plan.yaml", "--format", "json"])
    rename = next(r for r in json.loads(done.stdout)["results"] if r["id"] == "rename")
    assert rename["metadata"]["structuredPatch"] == [
        {
            "oldStart": 1,
            "oldLines": 2,
            "newStart": 1,
            "newLines": 2,
            "lines": ["-def load():", "+def read():", "     return 1"],
        }
    ]
