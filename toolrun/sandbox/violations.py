"""What the sandbox blocked, read back from a call's output.

A command that hits the sandbox prints its own error (``Read-only file
system``, ``Permission denied``, a proxy 403, ``Could not resolve host``); the
result gains a line that says what it was: ``write outside the sandbox
blocked: /etc/x``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from toolrun.sandbox.mounts import is_within

_QUOTED = re.compile(r"'([^'\n]+)'|\"([^\"\n]+)\"|‘([^’\n]+)’")
_EROFS = "Read-only file system"
_NO_HOST = re.compile(
    r"Could not resolve (?:host|proxy): (?P<host>[^\s'\"]+)"
    r"|(?:Failed to resolve|resolve host) '?(?P<host2>[A-Za-z0-9.\-]+)"
)
_NO_NETWORK = re.compile(
    r"Temporary failure in name resolution|Network is unreachable|Name or service not known"
)


def blocked_writes(output: str, cwd: str, plan_read_only: Sequence[str]) -> list[str]:
    """One line per path a write to was refused by the sandbox (first seen first)."""
    lines: list[str] = []
    for path in dict.fromkeys(erofs_paths(output)):
        absolute = os.path.normpath(os.path.join(cwd, path))
        if any(is_within(absolute, p) for p in plan_read_only):
            lines.append(f"write to a protected path blocked by the sandbox: {absolute}")
        else:
            lines.append(f"write outside the sandbox blocked: {absolute}")
    return lines


def erofs_paths(output: str) -> Iterable[str]:
    """The path in each ``Read-only file system`` line.

    ``touch: cannot touch '/etc/x': ...`` and Python's ``...: '/etc/x'`` quote it;
    ``bash: line 1: /etc/x: Read-only file system`` has it as the field before.
    """
    if _EROFS not in output:
        return
    for line in output.splitlines():
        if _EROFS not in line:
            continue
        quoted = _QUOTED.search(line)
        if quoted is not None:
            yield next(g for g in quoted.groups() if g)
            continue
        fields = [f.strip() for f in line.split(f": {_EROFS}")[0].split(": ")]
        if fields and fields[-1] and len(fields) > 1:
            yield fields[-1]


def blocked_hosts_offline(output: str) -> list[str]:
    """Hosts a command failed to reach in a sandbox without network."""
    hosts = [m.group("host") or m.group("host2") for m in _NO_HOST.finditer(output)]
    lines = [
        f"connection blocked by the sandbox: {h} (no network: "
        "sandbox.network.allowedDomains is not set)"
        for h in dict.fromkeys(h for h in hosts if h)
    ]
    if not lines and _NO_NETWORK.search(output):
        lines.append(
            "connection blocked by the sandbox (no network: "
            "sandbox.network.allowedDomains is not set)"
        )
    return lines
