"""Real toolrun processes for the CLI tests, and what they leave on disk."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def spawn(ws: Path, *args: str, stdin: int = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    """``toolrun ARGS`` in ``ws``, its stdout and stderr piped to the test.

    Unbuffered on the test's side: a ``readline()`` must not read lines past the first
    into a buffer that ``communicate()`` (which reads the pipe itself) never sees.
    """
    return subprocess.Popen(
        [sys.executable, "-m", "toolrun", *args],
        cwd=ws,
        bufsize=0,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def journal_records(ws: Path) -> list[dict[str, Any]]:
    """The records of the workspace's one journal; the file must be valid UTF-8."""
    (path,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    return [json.loads(line) for line in path.read_bytes().decode("utf-8").splitlines()]
