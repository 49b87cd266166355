"""The domain proxy: HTTP CONNECT and plain HTTP, run by toolrun outside the sandbox.

A sandboxed command has no network of its own; its ``HTTP(S)_PROXY`` points at
the bridge inside the sandbox (:mod:`toolrun.sandbox.bridge`), which forwards
each connection to this proxy's Unix socket. The proxy allows exactly the hosts
:class:`DomainPolicy` allows and answers ``403`` naming the host otherwise; it
records every refused host so the call's result can say what was blocked.
One proxy serves a whole run (:mod:`toolrun.sandbox.session`); what it refused while
a call ran is that call's (:meth:`DomainProxy.tally`). Every connection is decided on
its own, whichever call made it.

A name is only half the decision: the proxy runs outside the sandbox, so a name
(or IP spelling) that resolves to loopback, private, link-local or this host's
own addresses would reach the host's services. After the name is allowed, the
proxy resolves it once, refuses it if any address is one of those (the check
WebFetch makes, :mod:`toolrun.permissions.addresses`), and connects to the
addresses it checked. Only a host the user lists in
``sandbox.network.allowPrivateHosts`` (exact, optionally one port) may be reached
on such an address.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from toolrun.permissions.addresses import (
    AddressRefused,
    AddrInfo,
    Resolver,
    checked_addresses,
    connect_first,
    stream_addresses,
)
from toolrun.permissions.domains import (
    DomainPattern,
    HostPort,
    compile_domain,
    connect_host,
    host_port,
    url_host,
)

MAX_HEADER = 64 * 1024
CONNECT_TIMEOUT_S = 10.0
#: opens a connection to the first of the (checked) addresses that answers
Connector = Callable[[Sequence[AddrInfo]], socket.socket]


@dataclass(frozen=True, slots=True)
class DenyingRule:
    pattern: DomainPattern
    source: str
    #: what denies it, as the user wrote it: a WebFetch deny rule (empty) or a setting
    setting: str = ""

    def __str__(self) -> str:
        what = self.setting or f"WebFetch(domain:{self.pattern.text})"
        return f"{what} ({self.source})"


@dataclass(frozen=True, slots=True)
class DomainPolicy:
    """``allowedDomains`` with WebFetch(domain:...) semantics; deny rules win.

    ``private`` (``allowPrivateHosts``): the exact hosts, maybe on one port, that may
    be reached on a loopback, private, link-local or this host's own address.
    """

    allowed: tuple[DomainPattern, ...]
    denied: tuple[DenyingRule, ...] = ()
    private: tuple[HostPort, ...] = ()

    @classmethod
    def of(
        cls,
        allowed: Sequence[str],
        denied: Sequence[tuple[str, str]] = (),
        private: Sequence[str] = (),
        denied_settings: Sequence[tuple[str, str]] = (),
    ) -> DomainPolicy:
        """``denied`` are WebFetch deny rules' domains, ``denied_settings`` the entries of
        ``sandbox.network.deniedDomains``, each with where it was written."""
        # A malformed opt-in is a config error at load time; here it opts nothing in.
        hosts = (host_port(p) for p in private)
        settings = tuple(
            DenyingRule(compile_domain(p), source, f"sandbox.network.deniedDomains {p!r}")
            for p, source in denied_settings
        )
        return cls(
            tuple(compile_domain(p) for p in allowed),
            settings + tuple(DenyingRule(compile_domain(p), source) for p, source in denied),
            tuple(h for h in hosts if isinstance(h, HostPort)),
        )

    def refusal(self, host: str) -> str | None:
        """Why ``host`` may not be reached by name, or None when it may."""
        name = _name(host)
        if name is None:
            return f"{host!r} is not a host name toolrun can check"
        for rule in self.denied:
            # ``domain:*`` is every host (as bare WebFetch is), not one label's worth
            if rule.pattern.text.strip().rstrip(".") == "*" or rule.pattern.matches(name):
                return f"{name} is denied by {rule}"
        if any(p.matches(name) for p in self.allowed):
            return None
        return f"{name} is not in sandbox.network.allowedDomains"

    def reaches_private(self, host: str, port: int) -> bool:
        """Did the user opt in to reaching ``host:port`` on a non-public address?"""
        name = _name(host)
        return name is not None and any(h.covers(name, port) for h in self.private)


def _name(host: str) -> str | None:
    """``host`` as a client sent it (``::1``, ``API.test.``), spelled as rules spell it."""
    return url_host(f"http://{connect_host(host)}/").name


def _connect(infos: Sequence[AddrInfo]) -> socket.socket:
    return connect_first(infos, CONNECT_TIMEOUT_S)


def _private_refusal(host: str, port: int) -> Callable[[str, str], str]:
    def say(shown: str, why: str) -> str:
        return (
            f"refused to connect to {shown}: {why}; the sandbox reaches loopback, private, "
            "link-local and this host's own addresses only for a host listed in "
            f"sandbox.network.allowPrivateHosts ({_name(host) or host}:{port})"
        )

    return say


class DomainProxy:
    """A threaded proxy on a Unix socket; :meth:`close` stops it and its connections."""

    def __init__(
        self,
        path: str,
        policy: DomainPolicy,
        *,
        resolve: Resolver = stream_addresses,
        connect: Connector = _connect,
    ) -> None:
        self.path = path
        self.policy = policy
        self._resolve = resolve
        self._connect = connect
        self.blocked: list[str] = []  # reasons, in the order the requests came
        self._lock = threading.Lock()
        self._tallies: dict[int, list[str]] = {}  # the calls running now: their refusals
        self._tally_ids = itertools.count()
        self._open: set[socket.socket] = set()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self._listener.bind(path)
        self._listener.listen(64)
        self._thread = threading.Thread(target=self._serve, name="toolrun-proxy", daemon=True)
        self._thread.start()

    @contextlib.contextmanager
    def tally(self) -> Iterator[list[str]]:
        """The reasons of the refusals made while the block runs (one call): filled as
        they come. Calls that run side by side each see the refusals of both (the proxy
        cannot tell whose connection it was)."""
        number = next(self._tally_ids)
        seen: list[str] = []
        with self._lock:
            self._tallies[number] = seen
        try:
            yield seen
        finally:
            with self._lock:
                del self._tallies[number]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with self._lock:
            for conn in list(self._open):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
                conn.close()
            self._open.clear()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        self._thread.join(timeout=1)

    # ------------------------------------------------------------------ serving

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self._track(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _refuse(self, client: socket.socket, why: str) -> None:
        with self._lock:
            self.blocked.append(why)
            for seen in self._tallies.values():
                seen.append(why)
        _answer(client, 403, "Forbidden", f"toolrun sandbox: {why}\n")

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.add(sock)

    def _untrack(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)
        sock.close()

    def _handle(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            head, rest = _read_head(client)
            if head is None:
                return
            lines = head.split(b"\r\n")
            try:
                method, target, version = lines[0].decode("latin-1").split(" ", 2)
            except ValueError:
                _answer(client, 400, "Bad Request", "toolrun sandbox proxy: bad request line\n")
                return
            if method.upper() == "CONNECT":
                host, port = _host_port(target, 443)
            else:
                parts = urlsplit(target)
                if parts.scheme.lower() != "http" or not parts.hostname:
                    _answer(
                        client,
                        400,
                        "Bad Request",
                        "toolrun sandbox proxy: only http:// URLs and CONNECT\n",
                    )
                    return
                host, port = parts.hostname, parts.port or 80
            refusal = self.policy.refusal(host) if host else "the request names no host"
            if refusal is not None:
                self._refuse(client, refusal)
                return
            try:
                # Resolved once, here, under the name that was decided (``Localhost.`` is
                # ``localhost``): the addresses checked are the addresses connected to.
                infos = checked_addresses(
                    (_name(host) or host).strip("[]"),
                    port,
                    exempt=self.policy.reaches_private(host, port),
                    resolve=self._resolve,
                    refused=_private_refusal(host, port),
                )
            except AddressRefused as exc:
                self._refuse(client, str(exc))
                return
            except OSError as exc:
                _answer(client, 502, "Bad Gateway", f"toolrun sandbox: {host}:{port}: {exc}\n")
                return
            try:
                upstream = self._connect(infos)
            except OSError as exc:
                _answer(client, 502, "Bad Gateway", f"toolrun sandbox: {host}:{port}: {exc}\n")
                return
            upstream.settimeout(None)
            self._track(upstream)
            if method.upper() == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                upstream.sendall(_origin_form(method, target, version, lines[1:]))
            if rest:
                upstream.sendall(rest)
            _pump_both(client, upstream)
        except OSError:
            pass
        finally:
            if upstream is not None:
                self._untrack(upstream)
            self._untrack(client)


def _read_head(sock: socket.socket) -> tuple[bytes | None, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEADER:
            return None, b""
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _host_port(target: str, default: int) -> tuple[str, int]:
    host, sep, port = target.rpartition(":")
    if not sep or "]" in port:
        return target.strip("[]"), default
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        return "", default


_HOP_HEADERS = (b"proxy-connection:", b"proxy-authorization:", b"connection:", b"keep-alive:")


def _origin_form(method: str, target: str, version: str, headers: list[bytes]) -> bytes:
    parts = urlsplit(target)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    kept = [h for h in headers if not h.lower().startswith(_HOP_HEADERS)]
    # One request per connection: a second request on it could name another host.
    kept.append(b"Connection: close")
    line = f"{method} {path} {version}".encode("latin-1")
    return b"\r\n".join([line, *kept]) + b"\r\n\r\n"


def _answer(sock: socket.socket, code: int, reason: str, body: str) -> None:
    data = body.encode()
    head = (
        f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode()
    sock.sendall(head + data)


def _pump_both(a: socket.socket, b: socket.socket) -> None:
    other = threading.Thread(target=_pump, args=(b, a), daemon=True)
    other.start()
    _pump(a, b)
    other.join()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while chunk := src.recv(65536):
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
