"""The sandbox's proxy decides addresses, not names (issue 25, point 4).

The proxy runs outside the sandbox, so a name in ``allowedDomains`` that resolves to
loopback, private, link-local (metadata) or this host's own addresses would reach the
host's services. Each test starts a real HTTP server on 127.0.0.1 and a real
:class:`DomainProxy` on its Unix socket; ``curl`` reaches the proxy through a TCP
forwarder (the sandbox's bridge does the same inside bubblewrap), other clients speak
to the socket itself. No name here needs the network: only loopback spellings.

Sources: "Claude Code advisory" (sandbox proxy reached host loopback through an allowed
``localhost``), "sandbox-runtime tests" (srt resolves the name and refuses private
addresses; refuses ``*``), "WebFetch's own check" (tests/tools/test_webfetch_addresses.py),
"curl manual" (``-p``/``--proxytunnel`` sends CONNECT), "by hand".
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.sandbox.conftest import SANDBOX_ON, bash, exec_plan, needs_bwrap, needs_curl, write
from toolrun.permissions.addresses import AddrInfo, address_refusal, own_networks
from toolrun.permissions.domains import HostPort, host_port, overbroad
from toolrun.sandbox.proxy import DomainPolicy, DomainProxy

# --------------------------------------------------------------------------- helpers


class Forwarder:
    """127.0.0.1:PORT → the proxy's Unix socket: what the bridge is inside the sandbox."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._pipe, args=(client,), daemon=True).start()

    def _pipe(self, client: socket.socket) -> None:
        upstream = socket.socket(socket.AF_UNIX)
        try:
            upstream.connect(self.path)
        except OSError:
            client.close()
            return

        def pump(a: socket.socket, b: socket.socket) -> None:
            with contextlib.suppress(OSError):
                while chunk := a.recv(65536):
                    b.sendall(chunk)
            with contextlib.suppress(OSError):
                b.shutdown(socket.SHUT_WR)

        back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
        back.start()
        pump(client, upstream)
        back.join(5)
        client.close()
        upstream.close()

    def close(self) -> None:
        self.listener.close()


class Served:
    """A proxy for one policy, and the TCP door curl uses to reach it."""

    def __init__(self, tmp_path: Path, policy: DomainPolicy) -> None:
        self.proxy = DomainProxy(str(tmp_path / "proxy.sock"), policy)
        self.door = Forwarder(self.proxy.path)

    def curl(self, url: str, *flags: str) -> subprocess.CompletedProcess[str]:
        env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}  # no NO_PROXY, no .curlrc
        return subprocess.run(
            ["curl", "-sS", "--max-time", "20", "-x", f"http://127.0.0.1:{self.door.port}",
             *flags, url],
            capture_output=True, text=True, timeout=30, env=env, check=False,
        )  # fmt: skip

    def ask(self, request: str) -> bytes:
        """One raw request to the proxy's socket (what any client in the sandbox can send)."""
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(10)
            client.connect(self.proxy.path)
            client.sendall(request.encode())
            data = b""
            with contextlib.suppress(TimeoutError):
                while chunk := client.recv(65536):
                    data += chunk
                    if request.startswith("CONNECT") and b"\r\n\r\n" in data:
                        break
            return data

    def close(self) -> None:
        self.door.close()
        self.proxy.close()


Start = Callable[..., Served]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Start]:
    opened: list[Served] = []

    def start(allowed: Sequence[str], private: Sequence[str] = ()) -> Served:
        served = Served(tmp_path, DomainPolicy.of(allowed, (), private))
        opened.append(served)
        return served

    yield start
    for served in opened:
        served.close()


def refused_for_address(answer: bytes) -> bool:
    return answer.startswith(b"HTTP/1.1 403") and b"refused to connect to" in answer


# --------------------------------------------------------------------------- names


@needs_curl
@pytest.mark.parametrize(
    "name",
    [
        "localhost",  # Claude Code advisory: allowedDomains [localhost] reached host services
        "LOCALHOST",  # by hand: case does not matter to the resolver either
        "localhost.",  # by hand: a trailing dot is the same name
        "127.0.0.1",  # sandbox-runtime tests: an IP literal is judged as its address
    ],
)
def test_an_allowed_name_on_loopback_does_not_reach_the_host(
    serve: Start, server: int, name: str
) -> None:
    served = serve([name.rstrip(".").lower()])

    plain = served.curl(f"http://{name}:{server}/")
    tunnel = served.curl(f"http://{name}:{server}/", "-p")  # curl manual: -p sends CONNECT

    for done in (plain, tunnel):
        assert "hello from the test server" not in done.stdout
    assert "refused to connect to 127.0.0.1" in plain.stdout
    assert "a loopback address" in plain.stdout
    assert "403" in tunnel.stderr  # curl: CONNECT tunnel failed, response 403
    assert len(served.proxy.blocked) == 2
    assert all("a loopback address" in why for why in served.proxy.blocked)


@pytest.mark.parametrize(
    ("spelling", "why"),
    [
        # WebFetch's own check (its spellings), each one the proxy resolves to loopback:
        ("127.1", "a loopback address"),
        ("0x7f000001", "a loopback address"),
        ("2130706433", "a loopback address"),
        ("017700000001", "a loopback address"),  # by hand: octal
        ("0", "the unspecified address"),  # by hand: 0 is 0.0.0.0, which is this host
        ("0.0.0.0", "the unspecified address"),
        ("[::1]", "a loopback address"),
        ("[::ffff:127.0.0.1]", "a loopback address, inside ::ffff:7f00:1"),
    ],
)
@pytest.mark.parametrize("method", ["CONNECT", "GET"])
def test_every_ip_spelling_is_judged_by_its_address(
    serve: Start, server: int, spelling: str, why: str, method: str
) -> None:
    served = serve([spelling])
    target = f"{spelling}:{server}"
    line = f"CONNECT {target} HTTP/1.1" if method == "CONNECT" else f"GET http://{target}/ HTTP/1.1"

    answer = served.ask(f"{line}\r\nHost: {target}\r\n\r\n")

    assert refused_for_address(answer), answer
    assert why.encode() in answer
    assert b"hello from the test server" not in answer
    assert why in served.proxy.blocked[0]


def test_the_refusal_says_why_and_how_to_opt_in(serve: Start, server: int) -> None:
    served = serve(["localhost"])

    answer = served.ask(f"GET http://localhost:{server}/ HTTP/1.1\r\nHost: x\r\n\r\n")

    expected = (
        "refused to connect to 127.0.0.1, the address of localhost: a loopback address; the "
        "sandbox reaches loopback, private, link-local and this host's own addresses only "
        f"for a host listed in sandbox.network.allowPrivateHosts (localhost:{server})"
    )
    assert answer.endswith(f"toolrun sandbox: {expected}\n".encode())
    assert served.proxy.blocked == [expected]


def test_a_wildcard_allow_is_judged_the_same(serve: Start, server: int) -> None:
    # by hand: *.0.0.1 is a valid pattern by name and covers 127.0.0.1; a wildcard names
    # no exact host, so nothing it matches is ever opted in.
    closed = serve(["*.0.0.1"])
    answer = closed.ask(f"CONNECT 127.0.0.1:{server} HTTP/1.1\r\n\r\n")
    assert refused_for_address(answer), answer
    # an exact opt-in reaches its host (allowed by the wildcard), and no other spelling
    opted = serve(["*.0.0.1", "*.0.1"], ["127.0.0.1"])
    answer = opted.ask(f"GET http://127.0.0.1:{server}/ HTTP/1.1\r\nHost: h\r\n\r\n")
    assert b"hello from the test server" in answer
    assert refused_for_address(opted.ask(f"CONNECT 127.0.1:{server} HTTP/1.1\r\n\r\n"))


def test_this_hosts_own_addresses_are_refused(serve: Start) -> None:
    # sandbox-runtime tests / by hand: a service bound on 0.0.0.0 answers on every address
    # of the host; each of those (whatever its kind) is refused.
    listener = socket.create_server(("0.0.0.0", 0))
    port = listener.getsockname()[1]
    try:
        mine = [str(n.network_address) for n in own_networks() if n.version == 4]
        assert "127.0.0.0" in mine or "127.0.0.1" in mine
        for address in mine:
            served = serve([address])
            answer = served.ask(f"CONNECT {address}:{port} HTTP/1.1\r\n\r\n")
            assert refused_for_address(answer), (address, answer)
    finally:
        listener.close()


# --------------------------------------------------------------------------- opting in


@needs_curl
def test_the_opt_in_reaches_that_exact_host_and_port_only(serve: Start, server: int) -> None:
    served = serve(["localhost", "127.0.0.1", "127.1"], [f"localhost:{server}"])

    ok = served.curl(f"http://localhost:{server}/in")
    tunnel = served.curl(f"http://localhost:{server}/tunnel", "-p")
    other_port = served.ask("CONNECT localhost:9 HTTP/1.1\r\n\r\n")
    by_ip = served.ask(f"CONNECT 127.0.0.1:{server} HTTP/1.1\r\n\r\n")
    other_spelling = served.ask(f"CONNECT 127.1:{server} HTTP/1.1\r\n\r\n")

    assert "hello from the test server path=/in" in ok.stdout
    assert "hello from the test server path=/tunnel" in tunnel.stdout
    # the same address under another port or spelling was not opted in
    for answer in (other_port, by_ip, other_spelling):
        assert refused_for_address(answer), answer


def test_an_opt_in_without_a_port_covers_every_port(serve: Start, server: int) -> None:
    served = serve(["[::1]", "localhost"], ["LOCALHOST."])
    answer = served.ask(f"GET http://localhost:{server}/any HTTP/1.1\r\nHost: h\r\n\r\n")
    assert b"hello from the test server path=/any" in answer
    assert refused_for_address(served.ask("CONNECT [::1]:9 HTTP/1.1\r\n\r\n"))


def test_the_opt_in_does_not_allow_a_name(serve: Start, server: int) -> None:
    # The domain check comes first: allowPrivateHosts alone reaches nothing.
    served = serve(["example.com"], [f"localhost:{server}"])
    answer = served.ask(f"CONNECT localhost:{server} HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 403")
    assert b"localhost is not in sandbox.network.allowedDomains" in answer


# --------------------------------------------------------------------------- rebinding


def test_one_resolution_and_the_connection_goes_to_the_address_checked(tmp_path: Path) -> None:
    # by hand: a rebinding resolver answers public first, loopback after.
    answers = [["93.184.215.14"], ["127.0.0.1"]]
    asked: list[str] = []
    reached: list[list[str]] = []

    def rebinding(host: str, port: int) -> list[AddrInfo]:
        asked.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers.pop(0)]

    def connect(infos: Sequence[AddrInfo]) -> socket.socket:
        reached.append([str(i[4][0]) for i in infos])
        raise OSError("not really connecting")

    proxy = DomainProxy(
        str(tmp_path / "p.sock"), DomainPolicy.of(["rebind.test"]), resolve=rebinding,
        connect=connect,
    )  # fmt: skip
    served = Served.__new__(Served)
    served.proxy = proxy
    try:
        answer = served.ask("CONNECT rebind.test:443 HTTP/1.1\r\n\r\n")
    finally:
        proxy.close()
    assert answer.startswith(b"HTTP/1.1 502")
    assert asked == ["rebind.test"]
    assert reached == [["93.184.215.14"]]


@pytest.mark.parametrize(
    "addresses",
    [
        ["93.184.215.14", "127.0.0.1"],  # by hand: a public address first, loopback second
        ["93.184.215.14", "169.254.169.254"],  # Claude Code advisory: cloud metadata
        ["10.0.0.5"],  # sandbox-runtime tests: RFC 1918
        ["fd00::5", "2606:4700::1111"],  # by hand: IPv6 ULA beside a public one
    ],
)
def test_any_one_bad_address_refuses_the_host(tmp_path: Path, addresses: list[str]) -> None:
    def resolve(host: str, port: int) -> list[AddrInfo]:
        family = {4: socket.AF_INET, 6: socket.AF_INET6}
        return [
            (family[ipaddress.ip_address(a).version], socket.SOCK_STREAM, 6, "", (a, port))
            for a in addresses
        ]

    def connect(infos: Sequence[AddrInfo]) -> socket.socket:
        raise AssertionError("must not connect")

    proxy = DomainProxy(
        str(tmp_path / "p.sock"), DomainPolicy.of(["many.test"]), resolve=resolve, connect=connect
    )
    served = Served.__new__(Served)
    served.proxy = proxy
    try:
        answer = served.ask("CONNECT many.test:443 HTTP/1.1\r\n\r\n")
    finally:
        proxy.close()
    assert refused_for_address(answer), answer
    assert b"the address of many.test" in answer


# --------------------------------------------------------------------------- the classifier


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("100.64.0.1", "not a public address"),  # CGNAT, shared address space
        ("100.127.255.254", "not a public address"),
        ("fe80::1%eth0", "link-local"),
        ("ff02::1", "multicast"),
        ("192.0.2.7", "private"),  # documentation ranges are no destination either
        ("::", "unspecified"),
    ],
)
def test_address_kinds(address: str, why: str) -> None:
    reason = address_refusal(address)
    assert reason is not None and why in reason


def test_an_own_public_address_is_refused() -> None:
    own = [ipaddress.ip_network("93.184.215.14/32")]
    assert address_refusal("93.184.215.14", own) == "an address of this host"
    assert address_refusal("93.184.215.15", own) is None


@given(st.ip_addresses())
def test_every_refusable_kind_is_refused(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    reason = address_refusal(str(ip))
    kinds = (ip.is_loopback, ip.is_private, ip.is_link_local, ip.is_multicast,
             ip.is_unspecified, not ip.is_global)  # fmt: skip
    if any(kinds):
        assert reason is not None
    mapped = ipaddress.IPv6Address(f"::ffff:{ip}") if ip.version == 4 else None
    if mapped is not None and reason is not None:
        # the same address spelled as IPv4-mapped IPv6 is refused too
        assert address_refusal(str(mapped)) is not None


@given(st.ip_addresses(v=4, network="127.0.0.0/8") | st.ip_addresses(v=4, network="10.0.0.0/8")
       | st.ip_addresses(v=4, network="169.254.0.0/16") | st.ip_addresses(v=6, network="fc00::/7"))
def test_loopback_private_link_local_ranges_always_refused(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    assert address_refusal(str(ip)) is not None


# --------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    ("entry", "column"),
    [
        ("'*'", 22),  # sandbox-runtime: "*" is refused
        ("'*.'", 22),  # by hand: * with a dot
        ("'*.com'", 22),  # sandbox-runtime: *.com is too broad
        ("'*.*'", 22),  # by hand
        ("'example.*'", 22),  # by hand: a wildcard top-level domain
    ],
)
def test_an_over_broad_allowed_domain_is_a_located_error(
    tmp_path: Path, entry: str, column: int
) -> None:
    ws = tmp_path / "ws"
    write(ws / "toolrun.yaml", f"sandbox:\n  enabled: true\n  network:\n    allowedDomains: [{entry}]\n")
    write(ws / "p.json", '{"calls": [{"tool": "Read", "input": {"file_path": "x"}}]}')

    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "check", "p.json", "--workspace", str(ws)],
        cwd=ws, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert done.returncode == 3, done.stderr
    pattern = entry.strip("'")
    assert done.stderr.strip() == (
        f"toolrun.yaml:4:{column}: sandbox.network.allowedDomains[0]: '{pattern}' is "
        "over-broad: a wildcard may not cover a top-level domain or every host; name the "
        "domain (example.com, *.example.com)"
    )


def test_a_wildcard_opt_in_is_a_located_error_in_claude_settings(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "toolrun.yaml", "toolrun: {loadClaudeSettings: true}\n")
    write(
        ws / ".claude" / "settings.json",
        '{"sandbox": {"network": {\n  "allowedDomains": ["localhost"],\n'
        '  "allowPrivateHosts": ["localhost:8080", "*.localhost"]}}}\n',
    )
    write(ws / "p.json", '{"calls": [{"tool": "Read", "input": {"file_path": "x"}}]}')

    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "check", "p.json", "--workspace", str(ws)],
        cwd=ws, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert done.returncode == 3, done.stderr
    assert done.stderr.strip() == (
        ".claude/settings.json:3:43: sandbox.network.allowPrivateHosts[1]: '*.localhost' is a "
        "wildcard; name one exact host (localhost:8080)"
    )


@pytest.mark.parametrize(
    "pattern", ["example.com", "*.example.com", "api-*.example.com", "localhost", "*.co.uk"]
)
def test_named_domains_are_not_over_broad(pattern: str) -> None:
    assert overbroad(pattern) is None


def test_opt_in_entries_are_exact_hosts() -> None:
    assert host_port("localhost:8080") == HostPort("localhost", 8080)
    assert host_port("LocalHost.") == HostPort("localhost", None)
    assert host_port("[::1]:443") == HostPort("[::1]", 443)
    assert isinstance(host_port("*"), str)
    assert isinstance(host_port("localhost:http"), str)


# --------------------------------------------------------------------------- sandboxed exec


@needs_bwrap
@needs_curl
def test_sandboxed_curl_reaches_host_loopback_only_when_opted_in(
    ws: Path, server: int
) -> None:
    calls = [
        bash(f"curl -sS http://localhost:{server}/"),
        bash(f"curl -sS http://127.0.0.1:{server}/"),
        bash(f"curl -sS -p http://localhost:{server}/"),
        bash(f"curl -sS http://0x7f000001:{server}/"),
    ]
    closed = SANDBOX_ON + "  network:\n    allowedDomains: [localhost, 127.0.0.1]\n"
    results, _ = exec_plan(ws, closed, calls)
    assert len(results) == len(calls)
    for r in results:
        assert "hello from the test server" not in str(r["output"])
        assert "[sandbox] connection blocked by the sandbox: refused to connect to" in str(
            r["output"]
        ) or "127.0.0.1 is not in" in str(r["output"]), r

    opted = closed + f"    allowPrivateHosts: ['localhost:{server}']\n"
    results, _ = exec_plan(ws, opted, calls[:3])
    assert "hello from the test server" in str(results[0]["output"])
    assert "hello from the test server" not in str(results[1]["output"])  # not that spelling
    assert "hello from the test server" in str(results[2]["output"])

