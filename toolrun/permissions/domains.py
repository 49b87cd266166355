"""WebFetch domains: the host of a URL, and ``domain:`` patterns.

Matching is case-insensitive and ignores a trailing dot. ``*.example.com``
matches subdomains at any depth but not ``example.com`` itself; any other
``*`` stays inside one dot-separated label. A URL whose host is ambiguous
(user-info, backslashes, whitespace, percent-encoding in the host, a scheme
other than http/https) has no host: no domain rule can allow it.
"""

from __future__ import annotations

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
