"""WebFetch domains: the host of a URL, and ``domain:`` patterns.

Matching is case-insensitive and ignores a trailing dot. ``*.example.com``
matches subdomains at any depth but not ``example.com`` itself; any other
``*`` stays inside one dot-separated label. A URL whose host is ambiguous
(user-info, backslashes, whitespace, percent-encoding in the host, a scheme
other than http/https) has no host: no domain rule can allow it.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_HOST = re.compile(r"[a-z0-9\-_]+(\.[a-z0-9\-_]+)*|\[[0-9a-f:.]+\]")


@dataclass(frozen=True, slots=True)
class Host:
    """The host of a URL, or the reason there is none we can trust."""

    name: str | None
    problem: str | None = None


def url_host(url: str) -> Host:
    url = url.strip()
    if any(c.isspace() or ord(c) < 0x20 or c == "\\" for c in url):
        return Host(None, "the URL contains whitespace, control characters or backslashes")
    if not _SCHEME.match(url):
        return Host(None, "the URL has no scheme://")
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError for a malformed port
    except ValueError as exc:
        return Host(None, f"the URL does not parse ({exc})")
    del port
    if parts.scheme.lower() not in ("http", "https"):
        return Host(None, f"only http and https URLs are fetched, not {parts.scheme}:")
    if "@" in parts.netloc:
        return Host(None, "the URL has user-info before the host (user@host)")
    host = (parts.hostname or "").lower().rstrip(".")
    if "%" in parts.netloc:
        return Host(None, "the host is percent-encoded")
    if not host:
        return Host(None, "the URL has no host")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return Host(None, "the host is not a valid international domain name")
    if parts.netloc.startswith("[") or ":" in host:
        host = f"[{host.strip('[]')}]"
    if not _HOST.fullmatch(host):
        return Host(None, f"{host!r} is not a valid host name")
    return Host(host)


def domain_regex(pattern: str) -> str:
    """Regex (for fullmatch) over lower-case host names for a ``domain:`` pattern."""
    host = pattern.strip().lower().rstrip(".")
    if host.startswith("*."):
        rest = host[2:]
        return r"(?:[^.]+\.)+" + _labels(rest)
    return _labels(host)


def _labels(host: str) -> str:
    return r"\.".join(re.escape(label).replace(r"\*", "[^.]*") for label in host.split("."))


@dataclass(frozen=True, slots=True)
class DomainPattern:
    text: str
    regex: re.Pattern[str]

    def matches(self, host: str) -> bool:
        return self.regex.fullmatch(host) is not None


def compile_domain(pattern: str) -> DomainPattern:
    return DomainPattern(pattern, re.compile(domain_regex(pattern)))


# --------------------------------------------------------------------------- addresses


def exact_host(pattern: str) -> str | None:
    """The one host a ``domain:`` pattern names, normalised as :func:`url_host` does;
    None for a wildcard pattern (it names no exact host)."""
    text = pattern.strip()
    if "*" in text or not text:
        return None
    host = url_host(f"http://{text}/")
    return host.name


def connect_host(host: str) -> str:
    """A host as an HTTP client holds it (``::1``, ``Example.COM.``), spelled as
    :func:`url_host` spells it (``[::1]``, ``example.com``), for comparing with rules."""
    name = host.lower().rstrip(".")
    if ":" in name:
        return f"[{name.strip('[]')}]"
    try:
        return name.encode("idna").decode("ascii") if not name.isascii() else name
    except UnicodeError:
        return name


def address_refusal(address: str) -> str | None:
    """Why WebFetch must not connect to ``address`` (an IP it resolved), or None when it
    is a public address. Addresses embedded in IPv6 (mapped, 6to4, Teredo, NAT64) are
    judged by the IPv4 address inside."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        for inner in _embedded(ip):
            why = address_refusal(str(inner))
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
    return None


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
    if ip in _NAT64 or ip in _NAT64_LOCAL or (int(ip) >> 32 == 0 and int(ip) > 1):  # NAT64, ::a.b.c.d
        inner.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return inner
