"""Helpers shared by the check tests."""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def fixture(ws: Path, name: str, as_name: str | None = None) -> Path:
    """Copy a fixture into the workspace, so that reports name it briefly."""
    return Path(shutil.copy(FIXTURES / name, ws / (as_name or name)))


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, waiting to be reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
