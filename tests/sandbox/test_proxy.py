"""The domain proxy, on its own: a local server reached by test host names, never the internet."""

from __future__ import annotations

import socket
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from toolrun.permissions.addresses import AddrInfo
from toolrun.sandbox.proxy import DomainPolicy, DomainProxy

#: a public address (TEST names resolve here, so the address check passes them)
PUBLIC = "93.184.215.14"


def public(host: str, port: int) -> list[AddrInfo]:
    """Every test host name has one public address..."""
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (PUBLIC, port))]


def local(infos: Sequence[AddrInfo]) -> socket.socket:
    """... which is the local test server."""
    assert [i[4][0] for i in infos] == [PUBLIC]
    return socket.create_connection(("127.0.0.1", int(str(infos[0][4][1]))), timeout=5)


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[DomainProxy]:
    policy = DomainPolicy.of(
        ["api.test", "*.cdn.test", "docs.*.test"], [("blocked.cdn.test", "toolrun.yaml:3")]
    )
    served = DomainProxy(str(tmp_path / "p.sock"), policy, resolve=public, connect=local)
    yield served
    served.close()


def ask(proxy: DomainProxy, request: bytes, *, whole: bool = True) -> bytes:
    """The proxy's answer (``whole``: up to the end of the connection; else the first part)."""
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(5)
        client.connect(proxy.path)
        client.sendall(request)
        data = b""
        while chunk := client.recv(65536):
            data += chunk
            if not whole:
                break
        return data


def test_plain_http_to_an_allowed_host_is_forwarded(proxy: DomainProxy, server: int) -> None:
    request = f"GET http://api.test:{server}/x?y=1 HTTP/1.1\r\nHost: api.test\r\n\r\n"
    answer = ask(proxy, request.encode())
    assert answer.startswith(b"HTTP/1.0 200")
    assert b"path=/x?y=1 host=api.test" in answer


def test_connect_opens_a_tunnel(proxy: DomainProxy, server: int) -> None:
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(5)
        client.connect(proxy.path)
        client.sendall(f"CONNECT a.b.cdn.test:{server} HTTP/1.1\r\n\r\n".encode())
        assert client.recv(4096).startswith(b"HTTP/1.1 200")
        client.sendall(b"GET /tunnel HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := client.recv(65536):
            data += chunk
    assert b"path=/tunnel" in data


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("cdn.test", "cdn.test is not in sandbox.network.allowedDomains"),  # apex of *.cdn.test
        ("docs.a.b.test", "docs.a.b.test is not in"),  # * stays in one label
        ("api.test.evil.test", "api.test.evil.test is not in"),
        ("127.0.0.1", "127.0.0.1 is not in"),
        ("blocked.cdn.test", "denied by WebFetch(domain:blocked.cdn.test) (toolrun.yaml:3)"),
        ("API.TEST.", None),  # case and a trailing dot do not matter
        ("docs.x.test", None),
    ],
)
def test_only_the_listed_domains_deny_rules_winning(
    proxy: DomainProxy, server: int, host: str, why: str | None
) -> None:
    answer = ask(proxy, f"CONNECT {host}:{server} HTTP/1.1\r\n\r\n".encode(), whole=False)
    if why is None:
        assert answer.startswith(b"HTTP/1.1 200")
        assert proxy.blocked == []
    else:
        assert answer.startswith(b"HTTP/1.1 403")
        assert why.encode() in answer
        assert why in proxy.blocked[0]


def test_odd_requests_are_refused_not_forwarded(proxy: DomainProxy) -> None:
    assert ask(proxy, b"GET /relative HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert ask(proxy, b"GET ftp://api.test/ HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert ask(proxy, b"CONNECT user@api.test:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403")
    assert ask(proxy, b"nonsense\r\n\r\n").startswith(b"HTTP/1.1 400")
