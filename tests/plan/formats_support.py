"""What the format tests share: the fixtures, a workspace with the issue's rules, and a
real ``python -m toolrun`` run in it (the exit code a CI job sees)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
#: issue 26's project: the env file is never to be read, pushes ask
RULES = 'permissions:\n  deny: ["Read(./.env)"]\n  ask: ["Bash(git push *)"]\n'


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str

    def records(self) -> list[dict[str, Any]]:
        """The JSONL result records (``--format jsonl``)."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def by_id(self) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in self.records()}


def workspace(tmp_path: Path, rules: str = RULES) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "toolrun.yaml").write_text(rules)
    (ws / ".env").write_text("API_KEY=sk-test\n")
    return ws


def copy(ws: Path, name: str, as_name: str | None = None) -> Path:
    return Path(shutil.copy(FIXTURES / name, ws / (as_name or name)))


def toolrun(ws: Path, *args: str, stdin: str | None = None) -> Run:
    """``python -m toolrun ARGS`` in ``ws``, as a CI step runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    proc = subprocess.run(
        [sys.executable, "-m", "toolrun", *args],
        cwd=ws,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)
