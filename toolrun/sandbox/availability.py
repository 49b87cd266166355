"""Can this machine run bubblewrap sandboxes? Probed once per process and bwrap path."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass

from toolrun.sandbox.seccomp import unix_socket_filter

INSTALL_HINT = "install bubblewrap (apt-get install bubblewrap)"
OPT_OUT_HINT = "or set sandbox.failIfUnavailable: false to run unsandboxed with a warning"
#: How long the probe's ``bwrap ... true`` may take.
PROBE_TIMEOUT_S = 10


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether sandboxes can run here: the bubblewrap found, or why none can."""

    bwrap: str | None
    reason: str | None = None  # why sandboxes cannot run here; None when they can

    @property
    def ok(self) -> bool:
        return self.reason is None


#: The answers, by bwrap path; and the probes started (:func:`start_probe`) but not yet read.
_found: dict[str | None, Availability] = {}
_started: dict[str | None, Callable[[], Availability]] = {}
_lock = threading.Lock()


def probe(bwrap_path: str | None = None) -> Availability:
    """Run the namespaces a sandboxed call needs once, with ``true``, and remember the
    answer (a probe :func:`start_probe` started is waited for, not run again)."""
    with _lock:  # (one probe per path, whichever thread asks first)
        found = _found.get(bwrap_path)
        if found is None:
            answer = _started.pop(bwrap_path, None) or _start(bwrap_path)
            found = _found[bwrap_path] = answer()
        return found


def start_probe(bwrap_path: str | None = None) -> None:
    """Start the probe without waiting for it: :func:`probe` then waits only for what is
    left of it (a jail made meanwhile is dropped if the answer is no)."""
    with _lock:
        if bwrap_path not in _found and bwrap_path not in _started:
            _started[bwrap_path] = _start(bwrap_path)


def program(bwrap_path: str | None = None) -> str | None:
    """The bubblewrap the probe runs (None: none there), without running it."""
    bwrap = bwrap_path if bwrap_path else shutil.which("bwrap")
    return bwrap if bwrap is not None and os.access(bwrap, os.X_OK) else None


def _start(bwrap_path: str | None) -> Callable[[], Availability]:
    """Start the probe; the function that waits for its answer."""
    bwrap = program(bwrap_path)
    if bwrap is None:
        where = f" at {bwrap_path}" if bwrap_path else " on PATH"
        missing = Availability(None, f"bubblewrap (bwrap) is not installed{where}: {INSTALL_HINT}")
        return lambda: missing
    if unix_socket_filter() is None:
        unsupported = Availability(bwrap, "toolrun has no seccomp filter for this CPU architecture")
        return lambda: unsupported
    true = shutil.which("true") or "/bin/true"
    # (no --die-with-parent: its signal follows the thread that started bubblewrap, and a
    # probe started by a thread that ended would be killed and read as a refusal)
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
        "--cap-drop",
        "ALL",
        true,
    ]
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
    except (OSError, subprocess.SubprocessError) as exc:
        failed = Availability(bwrap, f"bubblewrap ({bwrap}) does not start: {exc}")
        return lambda: failed

    def answer() -> Availability:
        try:
            _, stderr = proc.communicate(timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            proc.kill()
            proc.communicate()
            return Availability(bwrap, f"bubblewrap ({bwrap}) does not start: {exc}")
        if proc.returncode != 0:
            detail = stderr.decode("utf-8", "replace").strip() or f"exit {proc.returncode}"
            return Availability(
                bwrap,
                f"bubblewrap cannot create namespaces here ({detail}); allow unprivileged "
                "user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run where "
                "they exist",
            )
        return Availability(bwrap)

    return answer
