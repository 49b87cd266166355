"""Fixtures for the MCP tests: the real test server, and a check that none is left running."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SERVER = Path(__file__).with_name("server.py")


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def wait_dead(pids: list[int], seconds: float = 3.0) -> list[int]:
    """The pids still alive after waiting up to ``seconds``."""
    deadline = time.monotonic() + seconds
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = [p for p in left if alive(p)]
    return left


class Servers:
    """Builds ``mcpServers`` entries that start tests/mcp/server.py and records their pids."""

    def __init__(self, root: Path) -> None:
        self.pidfile = root / "servers.pids"
        self.log = root / "server.log"

    def config(self, *flags: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        args = [str(SERVER), "--pidfile", str(self.pidfile), "--log", str(self.log), *flags]
        entry: dict[str, Any] = {"command": sys.executable, "args": args}
        if env is not None:
            entry["env"] = env
        return entry

    def pids(self) -> list[int]:
        if not self.pidfile.exists():
            return []
        return [int(x) for x in self.pidfile.read_text().split()]

    def events(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Servers]:
    """Every server started through this fixture must be gone when the test ends."""
    s = Servers(tmp_path)
    yield s
    left = wait_dead(s.pids())
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"MCP test server processes left running: {left}"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()
