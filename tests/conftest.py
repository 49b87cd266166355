from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A developer's real ~/.claude or TOOLRUN_* settings must never leak into a test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var in ("TOOLRUN_CONFIG", "TOOLRUN_MAX_CONCURRENCY"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
