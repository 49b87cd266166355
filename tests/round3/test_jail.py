"""The read-only jail holds whatever the command reading missed (#25, points 1, 3, 7).

``TOOLRUN_TEST_JUDGE_ALL=read-only`` (test-only) makes the executor jail every allowed Bash
call, so the round-3 escapes run for real, allowed by ``--mode bypassPermissions``, each
spelled as toolrun's reading lets through (a write outside the workspace is not a protected path), and
only the kernel stops them. (Reads of Read-denied files and the git surface, which the engine
refuses before they run, are proven at the kernel level in tests/sandbox/test_jail.py.) Each row asserts
that the call ran (it was allowed and jailed), then the disk (``Scene.changed()``), the
secrets (``Scene.leaked()``), the host (a listening socket, /proc) are unchanged.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.round3.scene import Scene
from tests.round3.test_everyday import EVERYDAY
from toolrun.sandbox.availability import probe

needs_bwrap = pytest.mark.skipif(not probe().ok, reason=f"no jail here: {probe().reason}")
pytestmark = needs_bwrap

R3 = "round-3 escape (tests/round3)"
SN = "claude-code-safety-net"
DG = "destructive_command_guard"
SRT = "sandbox-runtime tests"
ADV = "Claude Code advisory"
HAND = "by hand"


def hidden(command: str) -> str:
    """``command`` run through ``eval`` of its base64: no reading of the text can see it."""
    encoded = base64.b64encode(command.encode()).decode()
    return f'eval "$(echo {encoded} | base64 -d)"'


def py(code: str) -> str:
    return f"python3 -c {shlex.quote('import os, shutil, subprocess; ' + code)}"


class JailScene(Scene):
    """The round-3 scene with every allowed Bash call judged read-only (test-only hook)."""

    def env(self, **extra: str) -> dict[str, str]:
        return super().env(TOOLRUN_TEST_JUDGE_ALL="read-only", **extra)


@pytest.fixture
def scene(tmp_path: Path) -> JailScene:
    made = JailScene.make(tmp_path)
    made.config()
    return made


def run_jailed(scene: Scene, commands: list[str]) -> list[dict[str, Any]]:
    done, results = scene.run(commands, mode="bypassPermissions")
    assert len(results) == len(commands), done.stderr
    for result in results:
        # it ran, in the jail: otherwise the row proves nothing about the jail
        assert result["status"] in ("ok", "error"), result
        assert result["metadata"]["jail"]["enforced"] is True, result
    return results


# --------------------------------------------------------------------- writes

WRITES: list[tuple[str, str]] = [
    # through the symlink: src/link/.. is T, outside the workspace
    ("echo x > src/link/../pwned", R3),
    ("cp README.md src/link/../ws/copied", R3),
    ("touch src/link/../t", HAND),
    ("tee src/link/secret.txt < README.md", SRT),
    # curl -o outside
    ("curl -sS -o ../x file:///etc/hostname", R3),
    ("curl -sSo../z file:///etc/hostname", HAND),
    ("curl -sS file:///etc/hostname > ../w", SN),
    ("wget -q -O ../v file:///etc/hostname", DG),
    # sort -o outside the workspace
    ("sort -o ../outside/s README.md", R3),
    ("sort README.md -o /tmp/sorted-by-jail", HAND),
    ("sort -o ../s2 README.md", DG),
    ("sort -uo ../s3 README.md", HAND),
    # removing and moving outside (and inside: the workspace is read-only too)
    ("rm -f ../outside/secret.txt", R3),
    ("mv README.md ../moved", DG),
    ("ln -s /etc ../l", SN),
    ("mkdir ../newdir", HAND),
]


@pytest.mark.parametrize(("command", "source"), WRITES)
def test_a_write_in_the_jail_changes_nothing(scene: JailScene, command: str, source: str) -> None:
    results = run_jailed(scene, [command])
    assert scene.changed() == [], (source, results[0]["output"])
    assert not Path("/tmp/sorted-by-jail").exists()


def test_a_blocked_write_is_named_in_the_result(scene: JailScene) -> None:
    [result] = run_jailed(scene, ["echo x > src/link/../pwned"])
    assert f"read-only jail: write to {scene.tmp}/pwned blocked" in result["output"]
    assert result["metadata"]["jail"]["blocked"] == [
        f"read-only jail: write to {scene.tmp}/pwned blocked"
    ]


# --------------------------------------------------------------------- network


@pytest.fixture
def listener() -> Any:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    got: list[bool] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            got.append(True)
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], got
    stop.set()
    thread.join()
    server.close()


NETWORK: list[tuple[str, str]] = [
    ("curl -sS --max-time 2 http://127.0.0.1:{port}/", SRT),
    ("curl -sS --max-time 2 http://localhost:{port}/", SRT),
    ("wget -q -T 2 -O - http://127.0.0.1:{port}/", HAND),
    ("curl -sS --max-time 2 http://0.0.0.0:{port}/", HAND),
]


@pytest.mark.parametrize(("command", "source"), NETWORK)
def test_no_connection_leaves_the_jail(
    scene: JailScene, listener: Any, command: str, source: str
) -> None:
    port, got = listener
    run_jailed(scene, [command.format(port=port)])
    time.sleep(0.3)
    assert got == [], source


# --------------------------------------------------------------------- processes

BACKGROUND: list[tuple[str, str]] = [
    ("sleep 313 &", R3),
    ("setsid sleep 314 &", SN),
    ("nohup sleep 315 > /dev/null 2>&1 &", DG),
    ("(sleep 316 &) ; echo left", HAND),
]


def _sleeping(seconds: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmdline[:2] == [b"sleep", seconds.encode()]:
                found.append(int(name))
    return found


@pytest.mark.parametrize(("command", "source"), BACKGROUND)
def test_no_process_outlives_its_jailed_call(scene: JailScene, command: str, source: str) -> None:
    run_jailed(scene, [command])
    seconds = command.split("sleep ")[1].split()[0]
    assert _sleeping(seconds) == [], source


# --------------------------------------------------------------------- same inside as outside

#: Everyday commands whose output names nothing that differs in the jail (TMPDIR).
SAMPLE = [c for c, _ in EVERYDAY if "mktemp" not in c and "TMPDIR" not in c][:52] + [
    # (a whole-tree git status differs by design: a masked tracked file reads as modified)
    "git status src docs README.md", "git log --format=%s", "git diff -- src", "ls -la", "grep -rn print src",
    "git show --stat --format=%s HEAD", "cd src && pwd", "find . -name '*.py'",
]


def _seen(output: str, scene: Scene) -> list[str]:
    """The output with the scene's own folder named T, without the lines that name a
    masked file (and ls's block totals): the jail shows its unreadable stand-in there (mode
    000, empty), by design."""
    text = output.replace(str(scene.tmp), "T")
    # (ls -l times: the two scenes are made and listed seconds apart, maybe across a minute)
    text = re.sub(r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d", "TIME", text)
    return [line for line in text.splitlines() if ".env" not in line and not line.startswith("total ")]


def test_everyday_commands_print_the_same_inside_and_outside(tmp_path: Path) -> None:
    inside = JailScene.make(tmp_path / "a")  # (names of one length: ls shows link sizes)
    outside = Scene.make(tmp_path / "b")
    for scene in (inside, outside):
        scene.config()
    _, jailed = inside.run(SAMPLE, mode="bypassPermissions")
    _, free = outside.run(SAMPLE, mode="bypassPermissions", extra=("--enforce", "off"))
    assert len(jailed) == len(free) == len(SAMPLE)
    compared = 0
    for command, a, b in zip(SAMPLE, jailed, free, strict=True):
        if b["status"] not in ("ok", "error"):
            continue  # the engine did not let it run outside either
        assert a["metadata"]["jail"]["enforced"] is True, command
        same = _seen(a["output"], inside) == _seen(b["output"], outside)
        assert same, (command, a["output"], b["output"])
        assert a["status"] == b["status"], command
        compared += 1
    assert compared >= 30
    assert inside.changed() == []


# a call's shell: its pid and its PID namespace (the jail's side process is PID 1 there)
WHO = "echo $$ $(readlink /proc/self/ns/pid)"


def shells(results: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(int(pid), ns) for pid, ns in (r["output"].split() for r in results)]


def test_the_jail_is_built_once_for_read_only_calls(scene: JailScene) -> None:
    """Not a bubblewrap per call: the calls' shells share at most two PID namespaces (the
    jail's side processes, :data:`toolrun.reaper.jail.SIDES`), none of them toolrun's
    own, and in each the shells are children of the same side process, in order."""
    from toolrun.reaper.jail import SIDES

    results = run_jailed(scene, [WHO] * 12)
    seen = shells(results)
    namespaces = {ns for _, ns in seen}
    assert 1 <= len(namespaces) <= SIDES
    assert os.readlink("/proc/self/ns/pid") not in namespaces
    for ns in namespaces:
        pids = [pid for pid, where in seen if where == ns]
        assert pids[0] > 1 and pids == sorted(pids) and len(set(pids)) == len(pids)


def test_calls_one_at_a_time_start_one_side_process(scene: JailScene) -> None:
    """The second side process is started only once a command would wait for the first."""
    assert _jail_sides_while(scene, ["sleep 0.3; echo $$"] * 4, "--max-concurrency", "1") == 1


def test_overlapping_calls_use_a_second_side_process(scene: JailScene) -> None:
    """Read-only calls that run side by side and wait are started on two side processes
    (and no more), each in a bubblewrap of its own."""
    assert _jail_sides_while(scene, ["sleep 0.5; echo $$"] * 6) == 2


def _jail_sides_while(scene: JailScene, commands: list[str], *extra: str) -> int:
    """The most jail side processes of the run (a side process under toolrun whose parent
    is a bubblewrap) seen at once while ``commands`` run, each a read-only call, all of
    them ``ok``; none is left once the run is over."""
    calls = [{"tool": "Bash", "input": {"command": c}} for c in commands]
    (scene.ws / "plan.json").write_text(json.dumps({"calls": calls}))
    args = [sys.executable, "-m", "toolrun", "exec", "plan.json", "--format", "jsonl", *extra]
    most, seen = 0, set()
    with subprocess.Popen(args, cwd=scene.ws, env=scene.env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:  # fmt: skip
        while proc.poll() is None:
            sides = _side_processes()
            ours = [p for p, parent in sides.items()
                    if parent == "bwrap" and proc.pid in _ancestors(p)]  # fmt: skip
            most = max(most, len(ours))
            seen.update(ours)
            time.sleep(0.02)
        out, err = proc.communicate()
    results = [json.loads(line) for line in out.splitlines()]
    assert [r["status"] for r in results] == ["ok"] * len(commands), err
    # none outlives the run (each sees its socket close, takes its commands along, exits)
    deadline = time.monotonic() + 5
    while seen & set(_side_processes()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not seen & set(_side_processes())
    assert all(r["runs_in"] == "read-only jail" for r in results), results
    return most


def _ancestors(pid: int) -> set[int]:
    """The processes ``pid`` descends from (a test running beside it has jails too)."""
    found = set()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
        found.add(pid)
    return found


def _side_processes() -> dict[int, str]:
    """The reaper side processes on this machine (toolrun's own and jails'), each with
    its parent's name."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if b"reaper/side.py" not in f.read():
                    continue
            with open(f"/proc/{entry}/stat") as f:
                parent = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{parent}/comm") as f:
                found[int(entry)] = f.read().strip()
        except OSError:
            continue
    return found
