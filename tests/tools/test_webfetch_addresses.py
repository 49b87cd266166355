"""WebFetch never reaches loopback, private, link-local or metadata addresses, however the
host is spelled, unless a ``WebFetch(domain:...)`` allow rule names that exact host.

Real ``toolrun exec`` runs against a local server on 127.0.0.1 (the only address used).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.tools.test_webfetch import Server
from toolrun.permissions.addresses import address_refusal
from toolrun.permissions.domains import exact_host


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    running = Server()
    running.thread.start()
    yield running
    running.close()


def exec_fetch(tmp_path: Path, urls: list[str], allow: list[str]) -> list[dict[str, Any]]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "toolrun.yaml").write_text(json.dumps({"permissions": {"allow": allow}}))
    calls = [{"tool": "WebFetch", "input": {"url": url}} for url in urls]
    (ws / "p.json").write_text(json.dumps({"calls": calls}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    # A proxy in the environment must not change where WebFetch connects.
    env.update(http_proxy="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "p.json", "--workspace", str(ws),
         "--format", "jsonl"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    return [json.loads(line) for line in done.stdout.split("\n") if line.strip()]


LOOPBACK_SPELLINGS = [
    "127.0.0.1", "2130706433", "0x7f.1", "0x7f000001", "017700000001", "0177.0.0.1", "127.1",
    "127.0.1", "0x7F.0.0.1", "localhost", "LOCALHOST", "0", "0.0.0.0",
]


def test_a_bare_webfetch_rule_reaches_no_loopback_spelling(
    tmp_path: Path, server: Server
) -> None:
    urls = [f"http://{host}:{server.port}/plain" for host in LOOPBACK_SPELLINGS]
    urls += [f"http://[::ffff:127.0.0.1]:{server.port}/plain", f"http://[::1]:{server.port}/",
             f"http://[::ffff:7f00:1]:{server.port}/", f"http://[0:0:0:0:0:ffff:127.0.0.1]:{server.port}/"]

    results = exec_fetch(tmp_path, urls, ["WebFetch"])

    assert len(results) == len(urls)
    for r in results:
        assert r["decision"] == "allow"
        assert r["status"] == "error", r
        assert "refused to connect to" in r["error"], r
        assert any(word in r["error"] for word in ("loopback", "unspecified")), r
    assert server.requests == []


def test_the_refusal_names_the_address_and_the_host(tmp_path: Path, server: Server) -> None:
    (r,) = exec_fetch(tmp_path, [f"http://2130706433:{server.port}/plain"], ["WebFetch"])

    assert r["error"] == (
        f"cannot fetch http://2130706433:{server.port}/plain: refused to connect to 127.0.0.1, "
        "the address of 2130706433: a loopback address; WebFetch reaches loopback, link-local, "
        "private and metadata addresses only for a host that a WebFetch(domain:2130706433) "
        "allow rule names"
    )


def test_a_domain_rule_naming_the_exact_host_lets_it_through(
    tmp_path: Path, server: Server
) -> None:
    results = exec_fetch(
        tmp_path,
        [f"{server.url}/plain", f"http://2130706433:{server.port}/plain",
         f"http://localhost:{server.port}/plain"],
        ["WebFetch(domain:127.0.0.1)", "WebFetch(domain:*.localhost)", "WebFetch(domain:local*)"],
    )

    # 2130706433 is 127.0.0.1, but no rule names that spelling (not even to allow it);
    # localhost matches a wildcard rule, which names no exact host.
    assert [r["status"] for r in results] == ["ok", "needs_approval", "error"]
    assert results[0]["output"] == "café\n"
    assert "refused to connect to 127.0.0.1" in results[2]["error"]
    assert server.requests == ["/plain"]


def test_redirects_to_metadata_or_another_spelling_are_not_followed(
    tmp_path: Path, server: Server
) -> None:
    # localhost, 169.254.169.254 and 2130706433: other hosts, whatever address they have.
    paths = ["/elsewhere", "/metadata", "/decimal"]
    results = exec_fetch(tmp_path, [f"{server.url}{p}" for p in paths],
                         ["WebFetch(domain:127.0.0.1)"])

    for path, r in zip(paths, results, strict=True):
        assert r["status"] == "ok"
        assert r["output"].startswith(f"{server.url}{path} redirects to another host")
    assert sorted(server.requests) == sorted(paths)  # fetched side by side


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"), ("127.255.255.254", "loopback"), ("::1", "loopback"),
        ("0.0.0.0", "unspecified"), ("::", "unspecified"),
        ("169.254.169.254", "link-local"), ("fe80::1", "link-local"),
        ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.1.1", "private"),
        ("fd00:ec2::254", "private"), ("100.100.100.200", "not a public"),
        ("::ffff:127.0.0.1", "loopback"), ("::ffff:169.254.169.254", "link-local"),
        ("64:ff9b::7f00:1", "loopback"), ("2002:a9fe:a9fe::1", "link-local"),
        ("::7f00:1", "loopback"), ("224.0.0.1", "multicast"), ("255.255.255.255", "private"),
    ],
)
def test_address_refusals(address: str, why: str) -> None:
    reason = address_refusal(address)
    assert reason is not None and why in reason


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert address_refusal(address) is None


def test_only_exact_domain_patterns_name_a_host() -> None:
    assert exact_host("127.0.0.1") == "127.0.0.1"
    assert exact_host("Example.COM.") == "example.com"
    assert exact_host("[::1]") == "[::1]"
    assert exact_host("*.example.com") is None
    assert exact_host("*") is None
