"""Addresses a client outside the sandbox must not reach for a name: the one check
WebFetch and the sandbox's domain proxy share.

A domain rule names a host; what is reached is an address. A name (or an IP spelling:
``127.1``, ``0x7f000001``, ``[::ffff:127.0.0.1]``) that resolves to loopback, private,
link-local (cloud metadata), unspecified, multicast, shared (CGNAT) or one of this
host's own addresses would let a sandboxed command talk to services on the host or its
network. The caller resolves once, checks every address, and connects only to an
address it checked (a second lookup could be answered differently: DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import itertools
import socket
from collections.abc import Callable, Sequence
from pathlib import Path

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
#: (family, type, proto, canonname, sockaddr), as socket.getaddrinfo gives them
AddrInfo = tuple[socket.AddressFamily, socket.SocketKind, int, str, tuple[object, ...]]
Resolver = Callable[[str, int], Sequence[AddrInfo]]


class AddressRefused(OSError):
    """The host resolved to an address that may not be reached."""


def address_refusal(address: str, own: Sequence[IPNetwork] = ()) -> str | None:
    """Why ``address`` (an IP a name resolved to) must not be reached, or None when it
    is a public address. Addresses embedded in IPv6 (mapped, 6to4, Teredo, NAT64) are
    judged by the IPv4 address inside; ``own`` are this host's interface addresses."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        for inner in _embedded(ip):
            why = address_refusal(str(inner), own)
            if why is not None:
                return f"{why}, inside {ip}"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_unspecified:
        return "the unspecified address (this host)"
    if ip.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global:
        return "not a public address"
    if any(ip in net for net in own if net.version == ip.version):
        return "an address of this host"
    return None


def own_networks() -> tuple[IPNetwork, ...]:
    """This host's own addresses (Linux: the kernel's local routes and IPv6 addresses).

    Read only when an address is otherwise public (a host with a public address serves
    on it what it serves on loopback). Where /proc says nothing, the host name's
    addresses stand in.
    """
    found: list[IPNetwork] = [*_fib_locals(), *_inet6_addresses()]
    if not found:
        try:
            infos = socket.getaddrinfo(socket.gethostname(), None)
        except OSError:
            infos = []
        found = [ipaddress.ip_network(str(i[4][0]).split("%", 1)[0]) for i in infos]
    return tuple(dict.fromkeys(found))


def _fib_locals() -> list[IPNetwork]:
    """``/proc/net/fib_trie``: an address line, then ``/32 host LOCAL`` for each local one."""
    try:
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
    except OSError:
        return []
    out: list[IPNetwork] = []
    for previous, line in itertools.pairwise(lines):
        fields = line.split()
        if len(fields) >= 3 and fields[1:3] == ["host", "LOCAL"] and "--" in previous:
            address = previous.split()[-1]
            try:
                out.append(ipaddress.ip_network(f"{address}{fields[0]}", strict=False))
            except ValueError:
                continue
    return out


def _inet6_addresses() -> list[IPNetwork]:
    try:
        lines = Path("/proc/net/if_inet6").read_text().splitlines()
    except OSError:
        return []
    out: list[IPNetwork] = []
    for line in lines:
        raw = line.split()[0] if line.split() else ""
        try:
            out.append(ipaddress.ip_network(int(raw, 16).to_bytes(16, "big")))
        except (ValueError, OverflowError):
            continue
    return out


def checked_addresses(
    host: str,
    port: int,
    *,
    exempt: bool,
    resolve: Resolver,
    refused: Callable[[str, str], str],
) -> list[AddrInfo]:
    """``host`` resolved once; :class:`AddressRefused` (``refused(shown, why)`` says it)
    when any address may not be reached, unless the host is ``exempt`` (opted in).

    Any one bad address refuses the host: a client may try them in any order.
    """
    infos = list(resolve(host, port))
    if exempt:
        return infos
    own: Sequence[IPNetwork] | None = None
    for info in infos:
        ip = str(info[4][0])
        why = address_refusal(ip)
        if why is None:
            own = own_networks() if own is None else own
            why = address_refusal(ip, own)
        if why is not None:
            shown = ip if _same_ip(host, ip) else f"{ip}, the address of {host}"
            raise AddressRefused(refused(shown, why))
    return infos


def connect_first(
    infos: Sequence[AddrInfo],
    timeout: float | None,
    source_address: tuple[str, int] | None = None,
) -> socket.socket:
    """A connection to the first of ``infos`` (checked addresses) that answers."""
    error: OSError | None = None
    for family, kind, proto, _name, sockaddr in infos:
        sock = socket.socket(family, kind, proto)
        try:
            if timeout is not None:
                sock.settimeout(timeout)
            if source_address is not None:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            error = exc
    raise error if error is not None else OSError("the host has no address")


def stream_addresses(host: str, port: int) -> Sequence[AddrInfo]:
    """The system resolver, TCP addresses only."""
    return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)


def _same_ip(host: str, ip: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")) == ipaddress.ip_address(ip.split("%")[0])
    except ValueError:
        return False


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


def _embedded(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    inner: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped is not None:
        inner.append(ip.ipv4_mapped)
    if ip.sixtofour is not None:
        inner.append(ip.sixtofour)
    if ip.teredo is not None:
        inner.append(ip.teredo[1])
    if ip in _NAT64 or ip in _NAT64_LOCAL or (int(ip) >> 32 == 0 and int(ip) > 1):  # ::a.b.c.d
        inner.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return inner
