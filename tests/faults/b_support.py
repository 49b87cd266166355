"""Real toolrun processes for the fault tests of round 3 (part b): started, signalled,
timed (a hang check, not a speed check) and looked for in the process table after."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: A run must end within this after its timeout or the first signal (the issue asks for
#: about 2 s; generous, as the machine is shared: it tells a hang from an end).
BOUND_S = 10.0


@dataclass
class Ended:
    code: int
    results: list[dict[str, Any]]
    stderr: str
    seconds: float  # from the signal (or the start) to the exit

    def statuses(self) -> list[str]:
        return [r["status"] for r in self.results]


def toolrun(
    ws: Path,
    *args: str,
    env: dict[str, str] | None = None,
    address_space: int | None = None,
) -> subprocess.Popen[bytes]:
    """``python -m toolrun ARGS`` in ``ws`` (a process group of its own, as a shell job);
    ``address_space``: its RLIMIT_AS in bytes (``ulimit -v``)."""

    def limit() -> None:  # in the child, before exec
        import resource

        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    return subprocess.Popen(
        [sys.executable, "-m", "toolrun", *args],
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=limit if address_space is not None else None,  # noqa: PLW1509
    )


def finish(proc: subprocess.Popen[bytes], since: float) -> Ended:
    """Wait for the end (killed after a minute: a hang fails the test, never blocks it)."""
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"toolrun never ended: {err.decode(errors='replace')}") from None
    seconds = time.monotonic() - since
    results = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    return Ended(proc.returncode, results, err.decode(errors="replace"), seconds)


def run(
    ws: Path, *args: str, env: dict[str, str] | None = None, address_space: int | None = None
) -> Ended:
    started = time.monotonic()
    return finish(toolrun(ws, *args, env=env, address_space=address_space), started)


def without_ripgrep(folder: Path) -> dict[str, str]:
    """An environment whose PATH has every program of /usr/bin but ``rg`` (linked into
    ``folder``): Grep then uses its Python engine."""
    folder.mkdir(exist_ok=True)
    for name in os.listdir("/usr/bin"):
        if name != "rg":
            (folder / name).symlink_to(f"/usr/bin/{name}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    env["PATH"] = str(folder)
    return env


def signalled(
    ws: Path, sig: int, ready: Callable[[], bool], *args: str, env: dict[str, str] | None = None
) -> Ended:
    """Run toolrun until ``ready()`` (the event: the call runs), then send it ``sig``."""
    proc = toolrun(ws, *args, env=env)
    deadline = time.monotonic() + 60
    while not ready():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the call never started"
        time.sleep(0.02)
    sent = time.monotonic()
    proc.send_signal(sig)
    return finish(proc, sent)


def left_running(marker: str | Path) -> list[str]:
    """Processes whose command line or working directory names ``marker`` (a test's
    tmp_path): what a run left behind. Zombies are dead and not counted."""
    marker, me, found = str(marker), os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if state != "Z" and (marker in cmdline or cwd.startswith(marker)):
            found.append(f"{entry}: {cmdline.strip()} (in {cwd})")
    return found


def nothing_left(marker: str | Path, seconds: float = 5.0) -> list[str]:
    """``left_running`` once what is being killed has had ``seconds`` to go."""
    deadline = time.monotonic() + seconds
    while (left := left_running(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


class SlowServer:
    """A real HTTP server on 127.0.0.1 that answers as slowly as told, one thread a
    connection. ``mode``: ``body`` (headers at once, then a byte a second), ``headers``
    (the status line and headers a byte a second), ``chunked`` (a chunk of one byte a
    second), ``silent`` (accepts and never answers)."""

    def __init__(self, mode: str = "body") -> None:
        self.mode = mode
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/slow"
        self.connected = threading.Event()
        self.closed = threading.Event()  # a client went away
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)  # the request
                self.connected.set()
                head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                if self.mode == "chunked":
                    head += b"Transfer-Encoding: chunked\r\n\r\n"
                else:
                    head += b"Content-Length: 100000\r\n\r\n"
                if self.mode == "headers":
                    self._trickle(conn, head)
                    return
                if self.mode == "silent":  # until the client goes (its end reads as b"")
                    conn.settimeout(0.5)
                    while not self._stop.is_set():
                        try:
                            if not conn.recv(1):
                                return
                        except TimeoutError:
                            continue
                conn.sendall(head)
                while not self._stop.wait(1.0):
                    conn.sendall(b"1\r\nx\r\n" if self.mode == "chunked" else b"x")
            except OSError:
                pass
            finally:
                self.closed.set()

    def _trickle(self, conn: socket.socket, data: bytes) -> None:
        for byte in data:
            if self._stop.wait(1.0):
                return
            conn.sendall(bytes([byte]))

    def close(self) -> None:
        self._stop.set()
        self.listener.close()
