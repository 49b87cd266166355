"""The warm hook server: the engine loaded once, asked over a Unix socket.

A ``toolrun hook`` process that imported the config loader and the permission engine
would spend most of a tool call's budget (80 ms, design §8) on imports alone. Instead the
first hook call of a session decides in its own process and starts this server in the
background; the next ones send their payload to it and print its answer
(:mod:`toolrun.live.client`), paying for an interpreter and a connection only.

- One server per user, Python and toolrun installation (the socket's name hashes them):
  the directory is the user's ``$XDG_RUNTIME_DIR/toolrun`` or ``/tmp/toolrun-<uid>``,
  made 0700 and used only when the user owns it and no one else may enter it.
- It serves any workspace: configs are loaded and kept per workspace and environment
  while their files are unchanged (:class:`toolrun.live.engines.Engines`).
- Requests are answered one at a time (the engine is one object with its memo), each
  with exactly what an in-process call would print (:func:`toolrun.live.hook.
  answer_hook`).
- It exits after :data:`IDLE_S` without a request, on SIGTERM, and when its socket file
  is removed or replaced (a newer server took the name).

Wire format (:mod:`toolrun.live.wire`): the client sends its header's length on a line,
the header (options, environment, cwd, payload size) as a Python literal, then the
payload's bytes; the server answers the exit code and the lengths of stdout and stderr on
a line, then their bytes, and closes.
"""

from __future__ import annotations

import ast
import contextlib
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from toolrun.live.wire import MAX_HEADER, MODULE, private_dir, reply

IDLE_S = 600.0


def read_exactly(conn: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left > 0:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the connection closed early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_request(conn: socket.socket) -> tuple[dict[str, Any], bytes]:
    """The request's header and payload (ValueError, TypeError, SyntaxError: not one)."""
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the connection closed before a whole line")
        data += chunk
        if data.find(b"\n", 0, 32) < 0 and len(data) > 32:
            raise ValueError("not a header's length")
    line, _, data = data.partition(b"\n")
    size = int(line)
    if not 0 <= size <= MAX_HEADER:
        raise ValueError("header too long")
    if len(data) < size:
        data += read_exactly(conn, size - len(data))
    header = ast.literal_eval(data[:size].decode("utf-8"))  # a literal: nothing evaluated
    if not isinstance(header, dict):
        raise TypeError("not a header")
    payload = int(header["size"])
    data = data[size:]
    if len(data) < payload:
        data += read_exactly(conn, payload - len(data))
    return header, data[:payload]


def _serve_one(conn: socket.socket, engines: Any) -> None:
    from toolrun.live.hook import HookOptions, answer_hook

    header, raw = read_request(conn)
    options = HookOptions.from_json(header["options"])
    env = {str(k): str(v) for k, v in header["env"].items()}
    cwd = Path(header["cwd"])
    # paths in answers are shown relative to the hook's directory, as in its own process
    try:
        os.chdir(cwd)
    except OSError:
        os.chdir("/")
    answered = answer_hook(raw, options, env=env, engines=engines, cwd=cwd)
    conn.sendall(reply(answered.stdout, answered.stderr, answered.exit_code))


def serve(path: Path) -> None:
    """Listen on ``path`` until idle, signalled, or replaced."""
    from toolrun.live.engines import Engines

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the session that started it may end
    os.chdir("/")  # holds no directory of the session that started it
    aside = path.with_name(f"{path.name}.{os.getpid()}")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with contextlib.suppress(FileNotFoundError):
        aside.unlink()
    listener.bind(str(aside))
    os.chmod(aside, 0o600)
    listener.listen(64)
    os.replace(aside, path)  # atomic: a client sees the old server or this one
    mine = os.stat(path).st_ino
    (path.with_suffix(".pid")).write_text(f"{os.getpid()}\n")
    listener.settimeout(IDLE_S)
    engines = Engines()
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                return
            try:
                if os.stat(path).st_ino != mine:
                    return  # a newer server holds the name
            except OSError:
                return
            with conn:
                conn.settimeout(30)
                try:
                    _serve_one(conn, engines)
                except (OSError, ValueError, KeyError, TypeError, SyntaxError, RecursionError,
                        MemoryError):  # fmt: skip
                    pass  # that client gets no answer and decides in its own process
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == mine:
                path.unlink()
                path.with_suffix(".pid").unlink()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write(f"usage: python -m {MODULE} SOCKET\n")
        return 2
    path = Path(argv[0])
    if not private_dir(path.parent):
        return 1
    serve(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
