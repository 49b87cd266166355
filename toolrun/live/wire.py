"""What the hook's client and its warm server agree on: where the socket is, and the bytes.

Every name here is used by ``python -m toolrun hook`` on each tool call, before it knows
whether a server answers: the standard library's C parts and ``os`` only (no pathlib,
json, re or typing, which a regular install's interpreter has not loaded at start-up:
together several ms of every call).

A request is a line with the header's length, the header -- a Python literal
(``repr`` of a dict of str, bool, None, lists; read back with ``ast.literal_eval``,
which evaluates nothing) -- then the payload's bytes. The reply is a line
``exit_code stdout_bytes stderr_bytes``, then those bytes; the server closes after it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # (typing's own costs an import on every call)
if TYPE_CHECKING:
    from collections.abc import Mapping

SERVER_ENV = "TOOLRUN_HOOK_SERVER"
#: a payload larger than this is not a tool call an agent sent (Claude Code caps a Bash
#: command at far less); reading stops there rather than holding it all
MAX_PAYLOAD_BYTES = 32 * 1024 * 1024
#: the server's module
MODULE = "toolrun.live.server"
#: the longest header either side accepts
MAX_HEADER = 1 << 20
#: the environment a config depends on (load_config reads these)
_ENV_PREFIXES = ("TOOLRUN_",)
_ENV_NAMES = ("HOME",)


def server_off(env: Mapping[str, str]) -> bool:
    return env.get(SERVER_ENV, "on").lower() in ("off", "0", "false", "no")


def env_key(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables of ``env`` a config depends on, sorted."""
    return tuple(
        sorted((k, v) for k, v in env.items() if k.startswith(_ENV_PREFIXES) or k in _ENV_NAMES)
    )


#: the longest path a Unix socket's address holds (``sun_path``, less its NUL)
MAX_SOCKET_PATH = 107


def socket_dir(env: Mapping[str, str]) -> str:
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return os.path.join(runtime, "toolrun")
    return _tmp_dir(env)


def _tmp_dir(env: Mapping[str, str]) -> str:
    return os.path.join(env.get("TMPDIR") or "/tmp", f"toolrun-{os.getuid()}")


def private_dir(folder: str | os.PathLike[str]) -> bool:
    """Make ``folder`` (0700) or check it is the user's alone; False: do not use it."""
    try:
        os.makedirs(folder, mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    # a directory (S_ISDIR without the stat module), the user's, no one else's to enter
    return st.st_mode & 0o170000 == 0o040000 and st.st_uid == os.getuid() and not (
        st.st_mode & 0o077
    )


def socket_path(env: Mapping[str, str]) -> str:
    """The socket of the server for this Python and this toolrun (its files' version)."""
    import zlib  # not hashlib: loading OpenSSL costs more than the rest of the client

    import toolrun

    package = os.path.dirname(toolrun.__file__ or "")
    try:
        stamp = os.stat(os.path.join(package, "live", "server.py")).st_mtime_ns
    except OSError:
        stamp = 0
    # the environment the config reads is part of the name: a server decides with the
    # environment it was started with (HOME for ``~``, TOOLRUN_* settings)
    context = "\0".join(f"{k}={v}" for k, v in env_key(env))
    key = f"{sys.executable}\0{package}\0{toolrun.__version__}\0{stamp}\0{context}"
    data = key.encode("utf-8", "surrogateescape")
    digest = f"{zlib.crc32(data):08x}{zlib.crc32(data, 0x9E3779B9):08x}"  # 64 bits: a name
    name = f"hook-{digest}.sock"
    path = os.path.join(socket_dir(env), name)
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        # a deep runtime folder: no server could bind there, and every call would stay
        # cold; the folder used without a runtime folder instead
        path = os.path.join(_tmp_dir(env), name)
    return path


def request(header: dict[str, object], raw: bytes) -> bytes:
    """The bytes of a request: ``header`` (its ``size`` the payload's length) and ``raw``."""
    data = repr(header).encode("utf-8")  # (repr escapes lone surrogates: always UTF-8)
    return b"%d\n" % len(data) + data + raw


def reply(stdout: str, stderr: str, exit_code: int) -> bytes:
    out = stdout.encode("utf-8", "surrogateescape")
    err = stderr.encode("utf-8", "surrogateescape")
    return b"%d %d %d\n" % (exit_code, len(out), len(err)) + out + err


def read_reply(data: bytes) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of a whole reply (ValueError: not one)."""
    line, newline, rest = data.partition(b"\n")
    code, out, err = (int(part) for part in line.split(b" "))
    if not newline or out < 0 or err < 0 or len(rest) != out + err:
        raise ValueError("a partial reply")
    return (
        rest[:out].decode("utf-8", "surrogateescape"),
        rest[out:].decode("utf-8", "surrogateescape"),
        code,
    )
