"""Attacks on the sandbox, each a real ``toolrun exec`` plan the rules let through.

bypassPermissions allows every command here (none names a protected path the
analyser can see), so what stops them is the sandbox. The workspace is
``tmp_path/ws``; ``tmp_path/sentinel`` beside it must come out untouched, and
every call must still get its result.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.sandbox.conftest import (
    SANDBOX_ON,
    bash,
    exec_plan,
    needs_bwrap,
    needs_curl,
    wait_until,
)

pytestmark = needs_bwrap


def assert_untouched(tmp_path: Path) -> None:
    assert (tmp_path / "sentinel").read_text() == "untouched\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json", "sentinel", "ws"]


def all_answered(results: list[dict[str, object]], calls: int) -> None:
    assert len(results) == calls
    assert all(r["status"] in ("ok", "error") for r in results), results


WRITES_OUT = [
    "echo pwned > ../sentinel",
    "echo pwned >> {sentinel}",
    "echo pwned > /proc/self/root{sentinel}",
    "echo pwned > /proc/$$/root{sentinel}",
    "cp /etc/hostname ../copied",
    "mkdir ../newdir",
    "touch ../new",
    "mv ../sentinel moved",
    "rm -f ../sentinel",
    "ln -s /etc ../link",
    "python3 -c \"open('{sentinel}', 'w').write('pwned')\"",
    "python3 -c \"import os; os.rename('{sentinel}', 'x')\"",
    "cd .. && echo pwned > sentinel",
    "cd /proc/self/root{parent} && echo pwned > sentinel",
    "dd if=/dev/zero of={sentinel} bs=1 count=1",
    "truncate -s 0 {sentinel}",
    "chmod 000 {sentinel}",
    "touch -d 2000-01-01 {sentinel}",
]


def test_writes_outside_the_workspace_are_blocked(ws: Path, tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    calls = [bash(c.format(sentinel=sentinel, parent=tmp_path)) for c in WRITES_OUT]
    results, _ = exec_plan(ws, SANDBOX_ON, calls)
    all_answered(results, len(calls))
    assert_untouched(tmp_path)
    first = results[0]["output"]
    assert f"[sandbox] write outside the sandbox blocked: {sentinel}" in str(first)


def test_symlinks_and_hard_links_made_by_earlier_calls_lead_nowhere(
    ws: Path, tmp_path: Path
) -> None:
    sentinel = tmp_path / "sentinel"
    calls = [
        bash("ln -s .. up && ln -s ../sentinel s && ln -s / root"),
        bash("echo pwned > up/sentinel"),
        bash("echo pwned > s"),
        bash(f"echo pwned > root{sentinel}"),
        bash("python3 -c \"open('s', 'a').write('pwned')\""),
        bash(f"ln {sentinel} hard; echo pwned > hard"),
        bash("ln ../sentinel hard2; cat hard2 > /dev/null; echo pwned >> hard2"),
        bash("ln -s ../sentinel soft && cp /etc/hostname soft"),
    ]
    results, _ = exec_plan(ws, SANDBOX_ON, calls)
    all_answered(results, len(calls))
    assert_untouched(tmp_path)
    # The link could not be made (another mount): the write made a new file instead.
    assert (ws / "hard").stat().st_ino != sentinel.stat().st_ino


def test_a_daemon_left_with_setsid_is_gone_after_the_call(
    ws: Path, no_leftovers: Callable[[str], list[int]]
) -> None:
    calls = [
        bash("setsid sleep 991.11 >/dev/null 2>&1 & echo started"),
        bash("nohup sleep 991.12 >/dev/null 2>&1 & disown; echo started"),
        bash("(setsid sleep 991.13 >/dev/null 2>&1 &); echo started"),
        bash(
            'python3 -c "import os, subprocess\n'
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    subprocess.Popen(['sleep', '991.14'], stdout=subprocess.DEVNULL,"
            ' stderr=subprocess.DEVNULL, start_new_session=True)\n"; echo started'
        ),
        bash("setsid sleep 991.15 & sleep 30", timeout=1000),
        bash("sleep 991.16 >/dev/null &"),
    ]
    results, _ = exec_plan(ws, SANDBOX_ON, calls)
    assert [r["status"] for r in results] == ["ok", "ok", "ok", "ok", "timeout", "ok"]
    # (the timed-out call's namespace ends just after its bwrap is killed)
    assert wait_until(lambda: not no_leftovers("991.1"))


@needs_curl
def test_connections_reach_only_allowed_domains(ws: Path, server: int) -> None:
    # The test server is on the host's loopback: reaching it needs the exact opt-in
    # (tests/sandbox/test_proxy_addresses.py shows it refused without).
    config = SANDBOX_ON + (
        f"  network:\n    allowedDomains: [localhost]\n    allowPrivateHosts: ['localhost:{server}']\n"
    )
    calls = [
        bash(f"curl -sS http://localhost:{server}/"),
        bash(f"curl -sS -p http://localhost:{server}/"),
        bash(
            f'python3 -c "import urllib.request as u; '
            f"print(u.urlopen('http://localhost:{server}/').read().decode())\""
        ),
        bash(f"curl -sS http://127.0.0.1:{server}/"),
        bash("curl -sS https://evil.test/"),
        bash("python3 -c \"import urllib.request as u; u.urlopen('http://evil.test/x')\""),
        bash(f"curl -sS --noproxy '*' http://127.0.0.1:{server}/"),
        bash(
            f"env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy "
            f"curl -sS http://localhost:{server}/"
        ),
        bash(f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {server}))\""),
    ]
    results, _ = exec_plan(ws, config, calls)
    all_answered(results, len(calls))
    ok, connect, urllib, by_ip, https, py, noproxy, unset, raw = results
    for allowed in (ok, connect, urllib):
        assert allowed["status"] == "ok"
        assert "hello from the test server" in str(allowed["output"])
    assert "127.0.0.1 is not in sandbox.network.allowedDomains" in str(by_ip["output"])
    assert "connection blocked by the sandbox: evil.test is not in" in str(https["output"])
    assert "connection blocked by the sandbox: evil.test is not in" in str(py["output"])
    for escaped in (noproxy, unset, raw):
        assert escaped["status"] == "error"
        assert "hello from the test server" not in str(escaped["output"])


@needs_curl
def test_a_deny_rule_wins_over_allowed_domains(ws: Path, server: int) -> None:
    config = (
        "permissions:\n  defaultMode: bypassPermissions\n  deny: ['WebFetch(domain:localhost)']\n"
        "sandbox:\n  enabled: true\n  network:\n    allowedDomains: ['localhost']\n"
    )
    results, _ = exec_plan(ws, config, [bash(f"curl -sS http://localhost:{server}/")])
    assert "hello" not in str(results[0]["output"])
    assert "localhost is denied by WebFetch(domain:localhost)" in str(results[0]["output"])


@needs_curl
def test_without_allowed_domains_there_is_no_network(ws: Path, server: int) -> None:
    calls = [
        bash(f"curl -sS http://127.0.0.1:{server}/"),
        bash(f"curl -sS http://localhost:{server}/"),
        bash("curl -sS http://evil.test/"),
    ]
    results, _ = exec_plan(ws, SANDBOX_ON, calls)
    all_answered(results, len(calls))
    assert all(r["status"] == "error" for r in results)
    assert not any("hello" in str(r["output"]) for r in results)
    assert "connection blocked by the sandbox: evil.test (no network" in str(results[2]["output"])


def test_unix_sockets_outside_cannot_be_reached(
    ws: Path, host_socket: tuple[str, socket.socket]
) -> None:
    path, listener = host_socket
    calls = [
        bash(
            f'python3 -c "import socket; s = socket.socket(socket.AF_UNIX); '
            f"s.connect('{path}'); s.send(b'x')\""
        ),
        bash(f"socat - UNIX-CONNECT:{path} </dev/null || nc -U {path} </dev/null"),
    ]
    results, _ = exec_plan(ws, SANDBOX_ON, calls)
    all_answered(results, len(calls))
    assert all(r["status"] == "error" for r in results)
    with pytest.raises(TimeoutError):
        listener.accept()


def test_protected_paths_stay_as_they_were(ws: Path) -> None:
    hooks = ws / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "pre-commit").write_text("original\n")
    (ws / ".git" / "config").write_text("[core]\n")
    calls = [
        # Hidden from the analyser: only the sandbox sees these writes.
        bash("python3 -c \"open('.git/hooks/pre-commit', 'w').write('evil')\""),
        bash("python3 -c \"open('.git/config', 'a').write('[core]\\n\\tfsmonitor = evil')\""),
        bash("python3 -c \"import os; os.rename('.git', 'old-git')\""),
        bash("python3 -c \"import os; os.rename('.git/hooks', '.git/old-hooks')\""),
        bash("python3 -c \"import shutil; shutil.rmtree('.git/hooks')\""),
        bash(
            "python3 -c \"import os; os.makedirs('.claude', exist_ok=True); "
            "open('.claude/settings.json', 'w').write('{}')\""
        ),
        bash("python3 -c \"open('toolrun.yml', 'w').write('hooks: {}')\""),
        bash("python3 -c \"open('toolrun.yaml', 'w').write('hooks: {}')\""),
        bash("python3 -c \"open('.mcp.json', 'w').write('{}')\""),
        bash("python3 -c \"import os; os.symlink('elsewhere', '.claude')\""),
    ]
    config = SANDBOX_ON
    results, _ = exec_plan(ws, config, calls)
    all_answered(results, len(calls))
    assert all(r["status"] == "error" for r in results), [r["output"] for r in results]
    assert (hooks / "pre-commit").read_text() == "original\n"
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    assert (ws / "toolrun.yaml").read_text() == config
    assert sorted(p.name for p in ws.iterdir()) == [".git", ".toolrun", "toolrun.yaml"]
    assert "write to a protected path blocked by the sandbox" in str(results[0]["output"])


def test_no_capabilities_and_no_view_of_host_processes(ws: Path, tmp_path: Path) -> None:
    calls = [
        bash("mount -o remount,rw / 2>&1; mount --bind /tmp /mnt 2>&1; exit 1"),
        bash("grep CapEff /proc/self/status"),
        bash("ls /proc | grep -c '^[0-9]'"),
        bash(f"unshare -r sh -c 'echo pwned > {tmp_path}/sentinel'"),
    ]
    results, _ = exec_plan(ws, SANDBOX_ON, calls)
    all_answered(results, len(calls))
    assert "CapEff:\t0000000000000000" in str(results[1]["output"])
    assert int(str(results[2]["output"]).split()[0]) < 10
    assert_untouched(tmp_path)


def test_hidden_credentials_and_unreadable_paths(ws: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secrets"
    secret.mkdir()
    (secret / "key").write_text("top secret\n")
    (tmp_path / "token").write_text("also secret\n")
    config = SANDBOX_ON + (
        f"  filesystem:\n    denyRead: ['{secret}']\n"
        f"  credentials:\n    files: [{{path: '{tmp_path}/token', mode: deny}}]\n"
        "    envVars: [{name: SANDBOX_TEST_TOKEN, mode: deny}]\n"
    )
    calls = [
        bash(f"cat {secret}/key"),
        bash(f"ls {secret}"),
        bash(f"cat {tmp_path}/token"),
        bash("echo token=${SANDBOX_TEST_TOKEN:-unset}"),
        bash(f"cat /proc/self/root{secret}/key"),
    ]
    env = {**os.environ, "SANDBOX_TEST_TOKEN": "s3cr3t"}
    results, _ = exec_plan(ws, config, calls, env=env)
    all_answered(results, len(calls))
    outputs = "".join(str(r["output"]) for r in results)
    assert "secret" not in outputs.replace("secrets", "")
    assert "s3cr3t" not in outputs
    assert "token=unset" in outputs


def test_the_kernel_settings_and_the_first_process_are_out_of_reach(ws: Path) -> None:
    calls = [
        # core_pattern would run a program as root on the host at the next crash.
        bash('v=$(cat /proc/sys/kernel/core_pattern); echo "$v" > /proc/sys/kernel/core_pattern'),
        bash("echo 1 > /proc/sys/kernel/sysrq"),
        bash("echo change > /sys/kernel/uevent_helper"),
        # Every process, PID 1 included, is under the filter: nothing to take over.
        bash("grep -L 'Seccomp:.2' /proc/[0-9]*/status 2>/dev/null; echo checked"),
        bash('python3 -c "import ctypes; print(ctypes.CDLL(None).syscall(425, 1, 0))"'),
    ]
    results, _ = exec_plan(ws, SANDBOX_ON, calls)
    all_answered(results, len(calls))
    assert [r["status"] for r in results[:3]] == ["error"] * 3
    assert "Read-only file system" in str(results[0]["output"])
    assert str(results[3]["output"]).strip() == "checked"
    assert str(results[4]["output"]).strip() == "-1"  # io_uring_setup refused


def test_the_network_bridge_cannot_be_taken_over(
    ws: Path, host_socket: tuple[str, socket.socket]
) -> None:
    path, listener = host_socket
    config = SANDBOX_ON + "  network:\n    allowedDomains: [localhost]\n"
    calls = [
        # The forwarder is the one process without the filter: its memory is closed.
        bash(
            "for p in /proc/[0-9]*; do grep -q 'Seccomp:.0' $p/status || continue; "
            "echo unfiltered $p; exec 3<>$p/mem 2>/dev/null && echo opened $p; done; echo scanned"
        ),
        bash(
            f"python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{path}')\""
        ),
    ]
    results, _ = exec_plan(ws, config, calls)
    all_answered(results, len(calls))
    assert "unfiltered" in str(results[0]["output"])  # the forwarder is there
    assert "opened" not in str(results[0]["output"])
    assert results[1]["status"] == "error"
    with pytest.raises(TimeoutError):
        listener.accept()
