"""The hook's warm path imports next to nothing, and the server takes only what the client
sends: a literal header, never code; a reply that is not one is decided in process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.hook.conftest import ROOT, Hook, answer, base_env, payload, pre
from toolrun.live import wire

DENY = pre("deny", "toolrun: denied: deny rule Bash(rm *) (toolrun.yaml:11) matches `rm -rf build`")


def _server_socket(runtime: Path) -> Path:
    for _ in range(600):  # a wait for the server to come up, not a timing assertion
        pids = list((runtime / "toolrun").glob("*.pid"))
        if pids and pids[0].read_text().strip():
            return pids[0].with_suffix(".sock")
        time.sleep(0.05)
    raise AssertionError("no hook server started")


def _last(ws: Path) -> dict[str, object]:
    lines = (ws / ".toolrun" / "runs" / "session-sess-1.jsonl").read_text().splitlines()
    record: dict[str, object] = json.loads(lines[-1])
    return record


# what a regular install's interpreter has not imported when the hook starts
HEAVY = ("pathlib", "json", "re", "typing", "dataclasses", "subprocess", "yaml", "socket",
         "toolrun.live.hook", "toolrun.config", "toolrun.permissions")  # fmt: skip


def test_a_warm_call_imports_none_of_the_heavy_modules(
    hook: Hook, ws: Path, runtime: Path, tmp_path: Path
) -> None:
    env = {"XDG_RUNTIME_DIR": str(runtime), "TOOLRUN_HOOK_SERVER": "on"}
    deny = payload(ws, "Bash", {"command": "rm -rf build"})
    assert answer(hook(deny, env=env)) == DENY  # decided here; starts the server
    _server_socket(runtime)
    seen = tmp_path / "modules.txt"
    # without site (-S): nothing but the interpreter's own start-up is loaded before it
    code = (
        "import sys\nsys.argv = ['toolrun', 'hook']\ntry:\n"
        "    from toolrun.__main__ import run\n    run()\nfinally:\n"
        f"    open({str(seen)!r}, 'w').write('\\n'.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], input=json.dumps(deny), capture_output=True,
        text=True, cwd=ws, env={**base_env(tmp_path / "home"), **env}, timeout=120, check=False,
    )  # fmt: skip
    assert (done.returncode, json.loads(done.stdout)) == (0, DENY), done.stderr
    assert _last(ws)["metadata"]["decided_in"]["warm"] is True  # type: ignore[index]
    loaded = set(seen.read_text().split())
    assert "toolrun.live.client" in loaded
    assert [m for m in HEAVY if m in loaded or any(n.startswith(m + ".") for n in loaded)] == []


@pytest.mark.parametrize(
    "request_bytes",
    [
        # code where the header's literal goes, four ways: none of it may run
        b"%d\n%s",
        b"%d\n%s\n",
        b"%d\n[%s]",
        b"%d\n{'size': 0, 'x': %s}",
    ],
)
def test_the_server_evaluates_no_code_a_client_sends(
    hook: Hook, ws: Path, runtime: Path, tmp_path: Path, request_bytes: bytes
) -> None:
    env = {"XDG_RUNTIME_DIR": str(runtime), "TOOLRUN_HOOK_SERVER": "on"}
    deny = payload(ws, "Bash", {"command": "rm -rf build"})
    answer(hook(deny, env=env))
    sock = _server_socket(runtime)
    marker = tmp_path / "ran"
    evil = f"__import__('os').mkdir({str(marker)!r})".encode()
    body = request_bytes.replace(b"%d\n", b"").replace(b"%s", evil)
    data = b"%d\n" % len(body) + body
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(60)
    conn.connect(str(sock))
    conn.sendall(data)
    conn.shutdown(socket.SHUT_WR)
    assert conn.recv(1 << 16) == b""  # no answer: the connection is closed
    conn.close()
    assert not marker.exists()
    # and the server still answers the next (real) call
    assert answer(hook(deny, env=env)) == DENY
    assert _last(ws)["metadata"]["decided_in"]["warm"] is True  # type: ignore[index]


@pytest.mark.parametrize(
    "junk",
    [
        b'{"stdout": "{}", "stderr": "", "exit_code": 0}',  # the old JSON reply
        b"0 2 0\n{}{}",  # lengths that do not add up
        b"0 999 0\n{}",  # a reply cut short
        b"allow\n",  # not numbers at all
    ],
)
def test_a_reply_that_is_not_one_is_decided_in_process(
    hook: Hook, ws: Path, runtime: Path, tmp_path: Path, junk: bytes
) -> None:
    # a listener at the server's socket answering nonsense (an allow, were it believed)
    env = {"XDG_RUNTIME_DIR": str(runtime), "TOOLRUN_HOOK_SERVER": "on"}
    full = {**base_env(tmp_path / "home"), **env}
    code = "from toolrun.live.wire import socket_path; import os; print(socket_path(os.environ))"
    path = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=full, check=True
    ).stdout.strip()
    assert wire.private_dir(os.path.dirname(path))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)
    asked = []

    def serve() -> None:
        conn, _ = listener.accept()
        asked.append(conn.recv(1 << 16))
        conn.sendall(junk)
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        out = answer(hook(payload(ws, "Bash", {"command": "rm -rf build"}), env=env))
    finally:
        thread.join(60)
        listener.close()
    assert asked and asked[0].split(b"\n", 1)[0].isdigit()  # it was asked, in the new form
    assert out == DENY
    assert _last(ws)["metadata"]["decided_in"]["warm"] is False  # type: ignore[index]


def test_requests_and_replies_keep_every_string(tmp_path: Path) -> None:
    text = "é \udcff \x00 \n ' \" \\"  # any env value or output: surrogates, quotes, NULs
    header = {"options": {"settings_files": [text]}, "env": {"K": text}, "cwd": text, "size": 3}
    data = wire.request(header, b"abc")
    length, _, rest = data.partition(b"\n")
    import ast

    assert ast.literal_eval(rest[: int(length)].decode()) == header
    assert rest[int(length):] == b"abc"
    assert wire.read_reply(wire.reply(text, text + "x", 2)) == (text, text + "x", 2)
    for bad in (b"", b"0 1\n", b"0 1 1\nab c", b"x y z\n"):
        with pytest.raises(ValueError):
            wire.read_reply(bad)


def test_the_package_root_imports_no_typing() -> None:
    code = "import sys, toolrun; print('typing' in sys.modules, toolrun.__version__)"
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert out.stdout.split()[0] == "False"
