"""The bridge inside the sandbox: 127.0.0.1:PORT → the proxy's Unix socket outside.

It runs as ``python -I -S -c BRIDGE SOCKET PORT FILTER -- COMMAND...``: it
listens first (so the command never races it), forks the forwarder (its output
detached, so the call's output ends with the command), installs the seccomp
filter on itself and execs the command. The forwarder keeps the only Unix
socket access in the sandbox; it dies with the sandbox's PID namespace.

With ``--pid`` in place of ``--``, the forwarder's pid is appended to the command's
arguments: the reaper side process the sandbox runs (:mod:`toolrun.sandbox.session`)
is then the forwarder's parent, and must know it is no command's leftover.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

PORT = 3128

BRIDGE = r"""
import ctypes, os, socket, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
path, port, program = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3])
command = sys.argv[5:]
tell_pid = sys.argv[4] == "--pid"
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(64)
# Not dumpable, before the fork: the forwarder (the one process without the filter)
# must never be open to the command's ptrace or /proc/PID/mem. exec makes the
# command dumpable again.
libc.prctl(4, 0, 0, 0, 0)
forwarder = os.fork()
if forwarder == 0:
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    def pump(src, dst):
        try:
            while True:
                chunk = src.recv(65536)
                if not chunk:
                    break
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
    def serve(client):
        try:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(path)
        except OSError:
            client.close()
            return
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
        pump(client, upstream)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client,), daemon=True).start()
listener.close()
if tell_pid:
    command.append(str(forwarder))
if not program:
    os.execvp(command[0], command)
class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(
    22, 2, ctypes.byref(Program(len(program) // 8, program)), 0, 0
) != 0:
    sys.stderr.write("toolrun sandbox: cannot install the seccomp filter\n")
    sys.exit(126)
os.execvp(command[0], command)
"""


def bridge_command(
    socket_path: str, program: bytes, command: Sequence[str], *, tell_pid: bool = False
) -> list[str]:
    """The bridge's command line; ``tell_pid``: append the forwarder's pid to ``command``."""
    return [
        sys.executable,
        "-I",
        "-S",
        "-c",
        BRIDGE,
        socket_path,
        str(PORT),
        program.hex(),
        "--pid" if tell_pid else "--",
        *command,
    ]


def proxy_env(env: dict[str, str]) -> None:
    """Point every common proxy variable at the bridge (and bypass it for nothing)."""
    url = f"http://127.0.0.1:{PORT}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY"):
        env[name] = url
        env[name.lower()] = url
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
