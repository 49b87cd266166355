"""The warm hook server: started by a first call, answering the next ones as the hook's
own process would, reloading an edited config, and never trusted when it cannot be."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from tests.hook.conftest import Hook, answer, payload, pre


def _server_pid(runtime: Path, folder: str = "toolrun") -> int:
    """The pid of the server the first call started (it writes it once it listens)."""
    for _ in range(600):  # a wait for the server to come up, not a timing assertion
        pids = list((runtime / folder).glob("*.pid"))
        if pids and pids[0].read_text().strip():
            return int(pids[0].read_text())
        time.sleep(0.05)
    raise AssertionError("no hook server started")


def _last(ws: Path, session: str = "sess-1") -> dict[str, object]:
    lines = (ws / ".toolrun" / "runs" / f"session-{session}.jsonl").read_text().splitlines()
    record: dict[str, object] = json.loads(lines[-1])
    return record


def test_the_server_answers_the_next_calls_as_the_hook_would(
    hook: Hook, ws: Path, runtime: Path
) -> None:
    env = {"XDG_RUNTIME_DIR": str(runtime), "TOOLRUN_HOOK_SERVER": "on"}
    deny = payload(ws, "Bash", {"command": "rm -rf build"})
    expected = pre("deny", "toolrun: denied: deny rule Bash(rm *) (toolrun.yaml:11) matches "
                   "`rm -rf build`")
    assert answer(hook(deny, env=env)) == expected
    assert _last(ws)["metadata"]["decided_in"]["warm"] is False  # type: ignore[index]
    pid = _server_pid(runtime)
    sock = next((runtime / "toolrun").glob("*.sock"))
    assert oct(sock.stat().st_mode & 0o777) == "0o600"
    assert oct((runtime / "toolrun").stat().st_mode & 0o777) == "0o700"

    assert answer(hook(deny, env=env)) == expected
    assert _last(ws)["metadata"]["decided_in"] == {"pid": pid, "warm": True}
    # the same reply for the other shapes: silence, Gemini, a bad payload
    assert answer(hook(payload(ws, "Bash", {"command": "git status"}), env=env)) is None
    bad = hook(b"[1]", env=env)
    assert (bad.returncode, bad.stdout, bad.stderr) == (
        1, "", "toolrun hook: the payload must be a JSON object, not list\n"
    )
    # an edited config is read again by the server
    text = (ws / "toolrun.yaml").read_text().replace('- "Bash(npm test)"', '- "Bash(rm -rf *)"')
    (ws / "toolrun.yaml").write_text(text)
    out = answer(hook(deny, env=env))
    assert out == pre("deny", "toolrun: denied: deny rule Bash(rm *) (toolrun.yaml:11) matches "
                      "`rm -rf build`")
    assert answer(hook(payload(ws, "Bash", {"command": "npm test"}), env=env)) == pre(
        "ask", "toolrun: needs approval: no rule allows `npm test` (npm is not in the "
        "read-only set)"
    )
    assert _last(ws)["metadata"]["decided_in"] == {"pid": pid, "warm": True}


def test_a_dead_servers_socket_is_only_slower(hook: Hook, ws: Path, runtime: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(runtime), "TOOLRUN_HOOK_SERVER": "on"}
    deny = payload(ws, "Bash", {"command": "rm -rf build"})
    answer(hook(deny, env=env))
    pid = _server_pid(runtime)
    sock = next((runtime / "toolrun").glob("*.sock"))
    os.kill(pid, 15)
    for _ in range(600):
        if not sock.exists():
            break
        time.sleep(0.05)
    assert not sock.exists(), "the server did not remove its socket on SIGTERM"
    # the old server's pid file goes before the next call: the server that call starts
    # writes its own (removing it after the call raced with that write)
    (runtime / "toolrun" / sock.with_suffix(".pid").name).unlink(missing_ok=True)
    # a socket file nobody listens on
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(sock))
    stale.close()
    out = answer(hook(deny, env=env))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert _last(ws)["metadata"]["decided_in"]["warm"] is False  # type: ignore[index]
    assert _server_pid(runtime) != pid  # a new one took the name


def test_a_socket_directory_others_may_enter_is_never_used(
    hook: Hook, ws: Path, runtime: Path
) -> None:
    """A socket someone else could have put there might answer allow: never asked."""
    shared = runtime / "toolrun"
    shared.mkdir(mode=0o700)
    shared.chmod(0o777)
    env = {"XDG_RUNTIME_DIR": str(runtime), "TOOLRUN_HOOK_SERVER": "on"}
    for _ in range(2):
        out = answer(hook(payload(ws, "Bash", {"command": "rm -rf x"}), env=env))
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert _last(ws)["metadata"]["decided_in"]["warm"] is False  # type: ignore[index]
    assert list(shared.iterdir()) == []


def test_a_runtime_folder_too_deep_for_a_socket_serves_from_the_short_one(
    hook: Hook, ws: Path, runtime: Path
) -> None:
    # $XDG_RUNTIME_DIR/toolrun/hook-<16 hex>.sock would pass the 107 bytes a socket's
    # address holds: no server could bind it, and every call would stay cold
    deep = runtime / ("d" * 60) / ("e" * 30)
    deep.mkdir(parents=True, mode=0o700)
    short = runtime / "tmp"
    short.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(deep), "TMPDIR": str(short), "TOOLRUN_HOOK_SERVER": "on"}
    deny = payload(ws, "Bash", {"command": "rm -rf build"})
    expected = pre("deny", "toolrun: denied: deny rule Bash(rm *) (toolrun.yaml:11) matches "
                   "`rm -rf build`")
    assert answer(hook(deny, env=env)) == expected
    pid = _server_pid(short, f"toolrun-{os.getuid()}")
    assert not (deep / "toolrun").exists()
    assert answer(hook(deny, env=env)) == expected
    assert _last(ws)["metadata"]["decided_in"] == {"pid": pid, "warm": True}


def test_the_runtime_folder_is_kept_while_the_socket_address_fits(runtime: Path) -> None:
    from toolrun.live import wire

    short = str(runtime / "tmp")
    name = os.path.basename(wire.socket_path({"XDG_RUNTIME_DIR": str(runtime)}))

    def runtime_of(total: int) -> str:
        """A runtime folder whose socket's path would be ``total`` bytes long."""
        folder = runtime / ("r" * (total - len(f"{runtime}//toolrun/{name}")))
        folder.mkdir(exist_ok=True)
        return str(folder)

    fits, over = runtime_of(107), runtime_of(108)
    kept = wire.socket_path({"XDG_RUNTIME_DIR": fits, "TMPDIR": short})
    assert (len(kept), kept) == (107, f"{fits}/toolrun/{name}")
    moved = wire.socket_path({"XDG_RUNTIME_DIR": over, "TMPDIR": short})
    assert moved == f"{short}/toolrun-{os.getuid()}/{name}"
