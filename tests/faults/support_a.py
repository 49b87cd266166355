"""Real toolrun processes for the fault tests of #27 (items 1, 3, 4, 5, 8, 10, 11, 12)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def toolrun(
    ws: Path,
    *args: str,
    preexec: Callable[[], None] | None = None,
    timeout: float = 120,
    text: bool = True,
    **popen: Any,
) -> subprocess.CompletedProcess[Any]:
    """``python -m toolrun ARGS`` in ``ws``, to its end."""
    return subprocess.run(
        [sys.executable, "-m", "toolrun", *args],
        cwd=ws,
        capture_output=True,
        text=text,
        timeout=timeout,
        check=False,
        preexec_fn=preexec,
        **popen,
    )


def write_plan(ws: Path, calls: list[dict[str, Any]], name: str = "plan.json") -> Path:
    path = ws / name
    path.write_text(json.dumps({"calls": calls}))
    return path


def results(done: subprocess.CompletedProcess[Any]) -> list[dict[str, Any]]:
    """The results of a ``--format json`` run."""
    return list(json.loads(done.stdout)["results"])


def journal(ws: Path) -> list[dict[str, Any]]:
    """The records of the workspace's only journal."""
    (path,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]
