"""Can this machine run bubblewrap sandboxes? Probed once per process and bwrap path."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass

from toolrun.sandbox.seccomp import unix_socket_filter

INSTALL_HINT = "install bubblewrap (apt-get install bubblewrap)"
OPT_OUT_HINT = "or set sandbox.failIfUnavailable: false to run unsandboxed with a warning"


@dataclass(frozen=True, slots=True)
class Availability:
    bwrap: str | None
    reason: str | None = None  # why sandboxes cannot run here; None when they can

    @property
    def ok(self) -> bool:
        return self.reason is None


@functools.cache
def probe(bwrap_path: str | None = None) -> Availability:
    """Run the namespaces a sandboxed call needs once, with ``true``, and remember the answer."""
    bwrap = bwrap_path if bwrap_path else shutil.which("bwrap")
    if bwrap is None or not os.access(bwrap, os.X_OK):
        where = f" at {bwrap_path}" if bwrap_path else " on PATH"
        return Availability(None, f"bubblewrap (bwrap) is not installed{where}: {INSTALL_HINT}")
    if unix_socket_filter() is None:
        return Availability(bwrap, "toolrun has no seccomp filter for this CPU architecture")
    true = shutil.which("true") or "/bin/true"
    argv = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        true,
    ]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return Availability(bwrap, f"bubblewrap ({bwrap}) does not start: {exc}")
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        return Availability(
            bwrap,
            f"bubblewrap cannot create namespaces here ({detail}); allow unprivileged user "
            "namespaces (sysctl kernel.unprivileged_userns_clone=1) or run where they exist",
        )
    return Availability(bwrap)
