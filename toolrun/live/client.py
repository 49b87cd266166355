"""The hook's fast path: ask the warm server, else decide here and start one.

The server (:mod:`toolrun.live.server`) answers exactly what this process would; any
trouble reaching it (no server yet, a stale socket, a server that does not answer within
:data:`TIMEOUT_S`) only means this process decides the call itself, so a broken server
costs time, never a wrong answer. ``TOOLRUN_HOOK_SERVER=off`` always decides in
process and starts nothing.

Imports here are the standard library's only, until the in-process path needs more.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolrun.commands.hook import HookOptions, HookReply

SERVER_ENV = "TOOLRUN_HOOK_SERVER"
#: longer than any decision takes; a hung server only delays the call by this much
TIMEOUT_S = 10.0


def answer(raw: bytes, options: HookOptions) -> HookReply:
    """The reply to one hook payload, from the server when one answers."""
    env = os.environ
    cwd = Path.cwd()
    if env.get(SERVER_ENV, "on").lower() in ("off", "0", "false", "no"):
        return _here(raw, options, cwd)
    from toolrun.live.server import socket_path

    path = socket_path(env)
    reply = _ask(path, raw, options, cwd)
    if reply is not None:
        return reply
    reply = _here(raw, options, cwd)
    _start(path)
    return reply


def _here(raw: bytes, options: HookOptions, cwd: Path) -> HookReply:
    from toolrun.commands.hook import answer_hook

    return answer_hook(raw, options, cwd=cwd)


def _ask(path: Path, raw: bytes, options: HookOptions, cwd: Path) -> HookReply | None:
    from toolrun.commands.hook import HookReply
    from toolrun.live.server import private_dir, read_line

    if not private_dir(path.parent):
        return None  # a socket someone else could have put there is never asked

    header = {
        "options": options.to_json(),
        "env": dict(os.environ),
        "cwd": str(cwd),
        "size": len(raw),
    }
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(TIMEOUT_S)
            conn.connect(str(path))
            conn.sendall(json.dumps(header).encode("utf-8", "surrogateescape") + b"\n" + raw)
            data = json.loads(read_line(conn))
        return HookReply(str(data["stdout"]), str(data["stderr"]), int(data["exit_code"]))
    except (OSError, ValueError, KeyError, TypeError, ConnectionError):
        return None


def _start(path: Path) -> None:
    """Start a server for the next calls, detached (its own session, no inherited
    pipes: the agent waits for the hook's stdout to close, never for the server)."""
    import subprocess
    import sys

    from toolrun.live.server import MODULE, private_dir

    if not private_dir(path.parent):
        return  # a directory others may write: no socket of ours goes there
    try:
        subprocess.Popen(
            [sys.executable, "-m", MODULE, str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass  # no server: the next call decides in its own process too
