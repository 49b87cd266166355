from __future__ import annotations

import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from toolrun.sandbox.availability import probe

AVAILABLE = probe()
needs_bwrap = pytest.mark.skipif(
    not AVAILABLE.ok, reason=f"bubblewrap sandboxes cannot run here: {AVAILABLE.reason}"
)
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace: a subfolder of tmp_path, with a sentinel file beside it."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "sentinel").write_text("untouched\n")
    return workspace


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def exec_argv(plan: Path, ws: Path, *args: str) -> list[str]:
    """``toolrun exec PLAN`` in ``ws`` with jsonl results."""
    return [sys.executable, "-m", "toolrun", "exec", str(plan), "--format", "jsonl",
            "--workspace", str(ws), *args]  # fmt: skip


def exec_plan(
    ws: Path,
    config: str,
    calls: Sequence[dict[str, Any]] | str,
    *args: str,
    env: dict[str, str] | None = None,
) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[str]]:
    """``toolrun exec`` (a real process) on a plan in ``ws``; the jsonl results."""
    write(ws / "toolrun.yaml", config)
    text = calls if isinstance(calls, str) else json.dumps({"calls": list(calls)})
    plan = write(ws.parent / "plan.json", text)
    done = subprocess.run(
        exec_argv(plan, ws, *args),
        cwd=ws,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return results, done


def bash(command: str, **extra: Any) -> dict[str, Any]:
    return {"tool": "Bash", "input": {"command": command, **extra}}


def processes_with(marker: str) -> list[int]:
    """Host PIDs whose command line contains ``marker`` (works across PID namespaces).
    Every test's marker is its own across the suite, none the start of another's: tests
    run side by side (pytest -n), and "995.1" would also find another's "995.12"."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and int(entry) != os.getpid():
            found.append(int(entry))
    return found


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.fixture
def no_leftovers() -> Iterator[Callable[[str], list[int]]]:
    """Checks for processes a test left behind, and kills them so others are not affected."""
    markers: list[str] = []

    def check(marker: str) -> list[int]:
        markers.append(marker)
        return processes_with(marker)

    yield check
    for marker in markers:
        for pid in processes_with(marker):
            try:
                os.kill(pid, 9)
            except OSError:
                pass


SANDBOX_ON = "permissions:\n  defaultMode: bypassPermissions\nsandbox:\n  enabled: true\n"


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello from the test server path={self.path} host={self.headers['Host']}\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    """A local HTTP server on 127.0.0.1 (never the internet); its port."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def host_socket(tmp_path: Path) -> Iterator[tuple[str, socket.socket]]:
    """A Unix socket listening outside the sandbox (accept() times out if nobody came)."""
    path = str(tmp_path / "host.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    listener.settimeout(0.5)
    yield path, listener
    listener.close()
