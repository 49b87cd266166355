"""Read/Edit deny rules written as gitignore globs (matched through pathspec) hold in
real `toolrun exec` runs: the files they name are neither written nor shown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CONFIG = """permissions:
  allow: [Read, Edit, Write]
  deny: [%s]
"""


def run(ws: Path, rule: str, calls: list[dict[str, object]]) -> list[dict[str, object]]:
    (ws / "toolrun.yaml").write_text(CONFIG % json.dumps(rule))
    (ws / "plan.json").write_text(json.dumps({"calls": calls}))
    proc = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "plan.json", "--format", "jsonl"],
        cwd=ws, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        check=False,
    )
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.parametrize(
    ("rule", "target"),
    [
        ("Edit(src/**/*.py)", "src/a/b/mod.py"),
        ("Edit(src/**/*.py)", "src/mod.py"),  # ** also matches no folder
        ("Edit(*.[pP][eE][mM])", "keys/deep/server.PEM"),  # a name with no slash floats
        ("Edit(conf/?ecret.yaml)", "conf/secret.yaml"),
        ("Edit(build/**)", "build/out/x.o"),
    ],
)
def test_a_glob_deny_rule_keeps_the_file_as_it_was(tmp_path: Path, rule: str, target: str) -> None:
    ws = tmp_path / "ws"
    path = ws / target
    path.parent.mkdir(parents=True)
    path.write_text("old\n")
    (ws / "other.txt").write_text("old\n")
    results = run(ws, rule, [
        {"tool": "Write", "input": {"file_path": target, "content": "new\n"}},
        {"tool": "Edit", "input": {"file_path": target, "old_string": "old", "new_string": "x"}},
        {"tool": "Write", "input": {"file_path": "other.txt", "content": "new\n"}},
    ])
    assert [r["status"] for r in results] == ["denied", "denied", "ok"]
    assert path.read_text() == "old\n" and (ws / "other.txt").read_text() == "new\n"


@pytest.mark.parametrize("rule", ["Read(**/.env*)", "Read(.env*)", "Read(cfg/[.]env*)"])
def test_a_glob_read_deny_rule_shows_nothing_of_the_file(tmp_path: Path, rule: str) -> None:
    ws = tmp_path / "ws"
    (ws / "cfg").mkdir(parents=True)
    (ws / "cfg" / ".env.local").write_text("TOKEN=s3cr3t\n")
    results = run(ws, rule, [{"tool": "Read", "input": {"file_path": "cfg/.env.local"}}])
    assert [r["status"] for r in results] == ["denied"]
    assert "s3cr3t" not in json.dumps(results)
