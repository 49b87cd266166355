"""WebFetch hosts and domain patterns."""

from __future__ import annotations

import pytest

from toolrun.permissions.domains import compile_domain, url_host


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://github.com/a", "github.com"),
        ("https://GitHub.COM./a", "github.com"),
        ("http://github.com:8080/", "github.com"),
        ("https://bücher.ch/", "xn--bcher-kva.ch"),
        ("http://[::1]:80/", "[::1]"),
        ("https://github.com?x=@evil.com", "github.com"),
    ],
)
def test_host(url: str, host: str) -> None:
    assert url_host(url).name == host


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://a@evil.com", "user-info"),
        ("https://github.com\\@evil.com", "backslashes"),
        ("https://git hub.com", "whitespace"),
        ("github.com", "scheme"),
        ("ftp://github.com", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("https://github%2ecom", "percent-encoded"),
        ("https://", "no host"),
        ("https://x:99999/", "does not parse"),
    ],
)
def test_no_trusted_host(url: str, problem: str) -> None:
    host = url_host(url)
    assert host.name is None
    assert host.problem is not None and problem in host.problem


@pytest.mark.parametrize(
    ("pattern", "host", "expected"),
    [
        ("github.com", "github.com", True),
        ("github.com", "api.github.com", False),
        ("*.github.com", "api.github.com", True),
        ("*.github.com", "a.b.github.com", True),
        ("*.github.com", "github.com", False),
        ("*.github.com", "evilgithub.com", False),
        ("example.*", "example.com", True),
        ("example.*", "example.evil.com", False),
        ("api-*.example.com", "api-v2.example.com", True),
        ("GitHub.com.", "github.com", True),
    ],
)
def test_domain_pattern(pattern: str, host: str, expected: bool) -> None:
    assert compile_domain(pattern).matches(host) is expected
