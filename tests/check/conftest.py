from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace that is also the current directory (reports show paths relative to it)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
