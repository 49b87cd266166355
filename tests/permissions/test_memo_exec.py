"""A remembered decision never outlives what it read: real `toolrun exec` runs where the
same call comes again after an earlier call of the plan changed the files under it.

Each plan asks the same thing three times (so the engine remembers it), then runs Bash
`true`, after which a PostToolUse hook changes the disk (toolrun itself refuses any Bash
call that names the vault, so the change comes from outside the decided calls, as another
process's would), then asks once more: the last call must be decided afresh and refused,
and the secret must not reach the output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SECRET = "TOPSECRET-31337"
CONFIG = """permissions:
  allow: [Read, "Bash(cat *)", "Bash(true)"]
  deny: ["Read(./vault/**)"]
hooks:
  PostToolUse:
    - matcher: Bash
      hooks: [{type: command, command: %s}]
"""

#: Runs change.sh once, after the Bash call `true`.
HOOK = """
import json, subprocess, sys
if json.load(sys.stdin)["tool_input"].get("command") == "true":
    subprocess.run(["sh", "change.sh"], check=True)
"""


def run(ws: Path, same: dict[str, Any], change: str) -> list[dict[str, Any]]:
    (ws.parent / "hook.py").write_text(HOOK)
    (ws / "change.sh").write_text(change + "\n")
    hook = json.dumps(f"{sys.executable} {ws.parent / 'hook.py'}")
    (ws / "toolrun.yaml").write_text(CONFIG % hook)
    turns = [{"calls": [same]}] * 3 + [
        {"calls": [{"tool": "Bash", "input": {"command": "true"}}]},
        {"calls": [same]},
    ]
    (ws / "plan.json").write_text(json.dumps({"turns": turns}))
    proc = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "plan.json", "--format", "jsonl"],
        cwd=ws, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        check=False,
    )
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == 5, proc.stderr
    return results


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "vault").mkdir(parents=True)
    (ws / "vault" / "key.txt").write_text(SECRET + "\n")
    (ws / "open").mkdir()
    (ws / "open" / "key.txt").write_text("nothing here\n")
    (ws / "notes.txt").write_text("notes\n")
    return ws


@pytest.mark.parametrize(
    ("make", "same", "change"),
    [
        # a file link retargeted at the vault
        ("ln -s open/key.txt link", {"tool": "Read", "input": {"file_path": "link"}},
         "ln -sfn vault/key.txt link"),
        # a directory link retargeted: the call's own path never changes
        ("ln -s open dir", {"tool": "Read", "input": {"file_path": "dir/key.txt"}},
         "ln -sfn vault dir"),
        # the same through Bash
        ("ln -s open/key.txt link", {"tool": "Bash", "input": {"command": "cat link"}},
         "ln -sfn vault/key.txt link"),
        # a glob that comes to match a link into the vault
        ("true", {"tool": "Bash", "input": {"command": "cat notes*"}},
         "ln -sfn vault/key.txt notes-2.txt"),
    ],
)
def test_a_remembered_decision_is_not_reused_once_the_disk_changed(
    ws: Path, make: str, same: dict[str, Any], change: str
) -> None:
    subprocess.run(make, shell=True, cwd=ws, check=True)
    results = run(ws, same, change)
    assert [r["status"] for r in results[:4]] == ["ok"] * 4
    last = results[4]
    assert last["status"] == "denied", last
    assert SECRET not in json.dumps(results)
