"""The hook's fast path: ask the warm server, else decide here and start one.

The server (:mod:`toolrun.live.server`) answers exactly what this process would; any
trouble reaching it (no server yet, a stale socket, a server that does not answer within
:data:`TIMEOUT_S`) only means this process decides the call itself, so a broken server
costs time, never a wrong answer. ``TOOLRUN_HOOK_SERVER=off`` always decides in
process and starts nothing.

Imports here are the standard library's only, until the in-process path needs more.
"""

from __future__ import annotations

import _socket  # the C module: socket.py would import selectors too, ms of every call
import contextlib
import json
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from toolrun.live.config_env import env_key

if TYPE_CHECKING:
    from toolrun.live.hook import HookOptions, HookReply

SERVER_ENV = "TOOLRUN_HOOK_SERVER"
#: a payload larger than this is not a tool call an agent sent (Claude Code caps a Bash
#: command at far less); reading stops there rather than holding it all
MAX_PAYLOAD_BYTES = 32 * 1024 * 1024
#: the server's module, and the longest header line either side reads
MODULE = "toolrun.live.server"
MAX_HEADER = 1 << 20
#: longer than any decision takes; a hung server only delays the call by this much
TIMEOUT_S = 10.0


def server_off(env: Mapping[str, str]) -> bool:
    return env.get(SERVER_ENV, "on").lower() in ("off", "0", "false", "no")


def answer(raw: bytes, options: HookOptions) -> HookReply:
    """The reply to one hook payload, from the server when one answers."""
    from toolrun.live.hook import HookReply

    cwd = Path.cwd()
    if server_off(os.environ):
        return _here(raw, options, cwd)
    path = socket_path(os.environ)
    got = ask_server(path, raw, options.to_json(), cwd)
    if got is not None:
        return HookReply(*got)
    reply = _here(raw, options, cwd)
    start_server(path)
    return reply


def socket_dir(env: Mapping[str, str]) -> Path:
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime) / "toolrun"
    return Path(env.get("TMPDIR") or "/tmp") / f"toolrun-{os.getuid()}"


def private_dir(folder: Path) -> bool:
    """Make ``folder`` (0700) or check it is the user's alone; False: do not use it."""
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700, parents=True)
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def socket_path(env: Mapping[str, str]) -> Path:
    """The socket of the server for this Python and this toolrun (its files' version)."""
    import zlib  # not hashlib: loading OpenSSL costs more than the rest of the client

    import toolrun

    package = Path(toolrun.__file__).parent
    try:
        stamp = os.stat(package / "live" / "server.py").st_mtime_ns
    except OSError:
        stamp = 0
    # the environment the config reads is part of the name: a server decides with the
    # environment it was started with (HOME for ``~``, TOOLRUN_* settings)
    context = "\0".join(f"{k}={v}" for k, v in env_key(env))
    key = f"{sys.executable}\0{package}\0{toolrun.__version__}\0{stamp}\0{context}"
    data = key.encode("utf-8", "surrogateescape")
    digest = f"{zlib.crc32(data):08x}{zlib.crc32(data, 0x9E3779B9):08x}"  # 64 bits: a name
    return socket_dir(env) / f"hook-{digest}.sock"


def read_header(conn: _socket.socket) -> tuple[bytes, bytes]:
    """The first line (without its newline) and whatever came after it in the same reads."""
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the connection closed before a whole line")
        data += chunk
        if len(data) > MAX_HEADER:
            raise ConnectionError("header too long")
    line, _, rest = data.partition(b"\n")
    return line, rest


def read_all(conn: _socket.socket) -> bytes:
    chunks = []
    while chunk := conn.recv(1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _here(raw: bytes, options: HookOptions, cwd: Path) -> HookReply:
    from toolrun.live.hook import answer_hook

    return answer_hook(raw, options, cwd=cwd)


def ask_server(
    path: Path, raw: bytes, options: Mapping[str, object], cwd: Path
) -> tuple[str, str, int] | None:
    """(stdout, stderr, exit code) as the server answers, or None: ask no server (none
    runs, it did not answer, or its directory is not the user's alone)."""
    if not private_dir(path.parent):
        return None  # a socket someone else could have put there is never asked
    header = {"options": options, "env": dict(os.environ), "cwd": str(cwd), "size": len(raw)}
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(TIMEOUT_S)
        conn.connect(str(path))
        conn.sendall(json.dumps(header).encode("utf-8", "surrogateescape") + b"\n" + raw)
        data = json.loads(read_all(conn))  # the server closes after its answer
        return str(data["stdout"]), str(data["stderr"]), int(data["exit_code"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    finally:
        conn.close()


def start_server(path: Path) -> None:
    """Start a server for the next calls, detached (its own session, no inherited
    pipes: the agent waits for the hook's stdout to close, never for the server)."""
    import subprocess

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
