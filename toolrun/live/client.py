"""The hook's fast path: ask the warm server, else decide here and start one.

The server (:mod:`toolrun.live.server`) answers exactly what this process would; any
trouble reaching it (no server yet, a stale socket, a server that does not answer within
:data:`TIMEOUT_S`) only means this process decides the call itself, so a broken server
costs time, never a wrong answer. ``TOOLRUN_HOOK_SERVER=off`` always decides in
process and starts nothing.

Imports here are :mod:`toolrun.live.wire`'s (the standard library's C parts) until the
in-process path needs more.
"""

from __future__ import annotations

import _socket  # the C module: socket.py would import selectors too, ms of every call
import os
import sys
import time

from toolrun.live.wire import (
    MAX_HEADER,
    MAX_PAYLOAD_BYTES,
    MODULE,
    SERVER_ENV,
    env_key,
    private_dir,
    read_reply,
    request,
    server_off,
    socket_dir,
    socket_path,
)

TYPE_CHECKING = False  # (typing's own costs an import on every call)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolrun.live.hook import HookOptions, HookReply

__all__ = [
    "MAX_HEADER", "MAX_PAYLOAD_BYTES", "MODULE", "SERVER_ENV", "TIMEOUT_S", "answer",
    "ask_server", "env_key", "private_dir", "read_all", "server_off", "socket_dir",
    "socket_path", "start_server",
]  # fmt: skip

#: longer than any decision takes; a hung server only delays the call by this much
TIMEOUT_S = 10.0


def answer(raw: bytes, options: HookOptions) -> HookReply:
    """The reply to one hook payload, from the server when one answers."""
    from toolrun.live.hook import HookReply

    cwd = os.getcwd()
    if server_off(os.environ):
        return _here(raw, options, cwd)
    path = socket_path(os.environ)
    got = ask_server(path, raw, options.to_json(), cwd)
    if got is not None:
        return HookReply(*got)
    got = started_for_session(path, raw, options.to_json(), cwd)
    if got is not None:
        return HookReply(*got)
    reply = _here(raw, options, cwd)
    start_server(path)
    return reply


#: how long SessionStart waits for the server it started (50 ms a poll): 3 s
SERVER_START_POLLS = 60


def started_for_session(
    path: str, raw: bytes, options: Mapping[str, object], cwd: str
) -> tuple[str, str, int] | None:
    """For a SessionStart with no server running: start one and have it answer (it loads
    the config and what deciding needs, so the session's first tool call is answered
    warm). None: not a SessionStart, or no server came up in time."""
    if not _session_start(raw):
        return None
    start_server(path)
    for _ in range(SERVER_START_POLLS):
        time.sleep(0.05)
        got = ask_server(path, raw, options, cwd)
        if got is not None:
            return got
    return None


def _session_start(raw: bytes) -> bool:
    """Whether the payload is a SessionStart (read in full only when it may be one)."""
    if b"SessionStart" not in raw:
        return False
    from toolrun.live.payload import SessionStarted, parse_payload

    try:
        return isinstance(parse_payload(raw), SessionStarted)
    except Exception:  # noqa: BLE001 - a bad payload: the usual path says what is wrong
        return False


def read_all(conn: _socket.socket) -> bytes:
    chunks = []
    while chunk := conn.recv(1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _here(raw: bytes, options: HookOptions, cwd: str) -> HookReply:
    from pathlib import Path

    from toolrun.live.hook import answer_hook

    return answer_hook(raw, options, cwd=Path(cwd))


def ask_server(
    path: str, raw: bytes, options: Mapping[str, object], cwd: str
) -> tuple[str, str, int] | None:
    """(stdout, stderr, exit code) as the server answers, or None: ask no server (none
    runs, it did not answer, or its directory is not the user's alone)."""
    if not private_dir(os.path.dirname(path)):
        return None  # a socket someone else could have put there is never asked
    header = {"options": dict(options), "env": dict(os.environ), "cwd": cwd, "size": len(raw)}
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(TIMEOUT_S)
        conn.connect(path)
        conn.sendall(request(header, raw))
        return read_reply(read_all(conn))  # the server closes after its answer
    except (OSError, ValueError):
        return None
    finally:
        conn.close()


def start_server(path: str) -> None:
    """Start a server for the next calls, detached (its own session, no inherited
    pipes: the agent waits for the hook's stdout to close, never for the server)."""
    import subprocess

    if not private_dir(os.path.dirname(path)):
        return  # a directory others may write: no socket of ours goes there
    try:
        subprocess.Popen(
            [sys.executable, "-m", MODULE, path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass  # no server: the next call decides in its own process too
