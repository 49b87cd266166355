"""Reading what the sandbox blocked back from a command's own error messages."""

from __future__ import annotations

from toolrun.sandbox.violations import blocked_hosts_offline, blocked_writes


def test_each_tool_spelling_of_a_read_only_write() -> None:
    output = (
        "bash: /etc/a: Read-only file system\n"
        "bash: line 3: ../b: Read-only file system\n"
        "touch: cannot touch '/etc/c': Read-only file system\n"
        "mkdir: cannot create directory \u2018/etc/d\u2019: Read-only file system\n"
        "OSError: [Errno 30] Read-only file system: '/etc/e'\n"
        "cp: cannot create regular file '/ws/.git/hooks/x': Read-only file system\n"
        "bash: /etc/a: Read-only file system\n"
    )
    assert blocked_writes(output, "/ws/sub", ["/ws/.git/hooks"]) == [
        "write outside the sandbox blocked: /etc/a",
        "write outside the sandbox blocked: /ws/b",
        "write outside the sandbox blocked: /etc/c",
        "write outside the sandbox blocked: /etc/d",
        "write outside the sandbox blocked: /etc/e",
        "write to a protected path blocked by the sandbox: /ws/.git/hooks/x",
    ]


def test_output_without_blocked_writes_adds_nothing() -> None:
    assert blocked_writes("Read-only file systems are great\nok\n", "/", []) == []


def test_hosts_that_could_not_be_reached_without_a_network() -> None:
    output = "curl: (6) Could not resolve host: evil.test\n"
    expected = (
        "connection blocked by the sandbox: evil.test (no network: "
        "sandbox.network.allowedDomains is not set)"
    )
    assert blocked_hosts_offline(output) == [expected]
    assert blocked_hosts_offline("socket.gaierror: [Errno -3] Temporary failure in name resolution")
