"""Shared fixtures for the built-in tool tests: an anyio backend and a workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.tools.base import ToolContext


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace folder (resolved, as ToolContext keeps it)."""
    return tmp_path.resolve()


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext.for_workspace(ws)
