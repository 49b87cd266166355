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
    """A ``domain:`` pattern of a WebFetch rule, compiled."""

    text: str
    regex: re.Pattern[str]

    def matches(self, host: str) -> bool:
        return self.regex.fullmatch(host) is not None


def compile_domain(pattern: str) -> DomainPattern:
    return DomainPattern(pattern, re.compile(domain_regex(pattern)))


def overbroad(pattern: str) -> str | None:
    """Why an ``allowedDomains`` entry allows too much, or None.

    As sandbox-runtime refuses them: ``*``, ``*.``, ``*.*``, a wildcard over a top-level
    domain (``*.com``, ``example.*``): after the leading ``*.``, the last two labels must
    be literal (``*.example.com``, ``api-*.example.com`` are fine). An exact single-label
    name (``localhost``) names one host and is fine.
    """
    host = pattern.strip().lower().rstrip(".")
    if "*" not in host:
        return None
    labels = host.removeprefix("*.").split(".")
    if len(labels) < 2 or any("*" in label or not label for label in labels[-2:]):
        return (
            f"{pattern!r} is over-broad: a wildcard may not cover a top-level domain or every "
            "host; name the domain (example.com, *.example.com)"
        )
    return None


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


@dataclass(frozen=True, slots=True)
class HostPort:
    """One exact host (spelled as :func:`url_host` spells it), on one port or on any."""

    host: str
    port: int | None = None

    def covers(self, host: str, port: int) -> bool:
        return self.host == host and (self.port is None or self.port == port)

    def __str__(self) -> str:
        return self.host if self.port is None else f"{self.host}:{self.port}"


def host_port(entry: str) -> HostPort | str:
    """``host`` or ``host:port`` (``[::1]:8080``) naming exactly one host, or why not."""
    text = entry.strip()
    if "*" in text:
        return f"{entry!r} is a wildcard; name one exact host (localhost:8080)"
    host = url_host(f"http://{text}/")
    if host.name is None or "/" in text:
        return f"{entry!r} is not a host or host:port ({host.problem or 'a path is not a host'})"
    port = urlsplit(f"http://{text}/").port
    if port == 0:
        return f"{entry!r}: port 0 is no port"
    return HostPort(host.name, port)
