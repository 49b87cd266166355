"""The ``bwrap`` command line of the user's sandbox (a pure function of its plan).

The whole filesystem is visible read-only; the writable roots are bound over
it, then the protections, then the unreadable paths (an empty directory or an
empty file with mode 000: the command runs without capabilities, so not even
root reads them). The sandbox gets its own PID namespace, whose first process is the
reaper side process that starts every sandboxed command of the run
(:mod:`toolrun.sandbox.session`): every process ends with it, however it detached; no
network namespace access at all (a loopback device only); and no capabilities.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolrun.sandbox.mounts import MountPlan, is_within
from toolrun.tempdirs import new_folder

# No UTS or cgroup namespace: without capabilities a command can change neither, and
# each namespace costs the call time. No --die-with-parent: its signal comes when the
# *thread* that started bubblewrap ends (a jail made in a background thread was killed
# about one time in five); the side process inside ends the sandbox when toolrun is gone
# (the end of its control socket), even after SIGKILL.
NAMESPACES = (
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-net",
    # PID 1 is our own process (the side process, or the bridge that becomes it), under
    # the filter: bwrap's own init would be a process without it whose memory the
    # command could write through /proc/1/mem.
    "--as-pid-1",
    "--cap-drop",
    "ALL",
)


@dataclass(frozen=True, slots=True)
class Folders:
    """toolrun's own folders for this process: never writable from inside a sandbox."""

    control: Path  # proxy sockets, the seccomp program, the unreadable stand-ins
    tmp: Path  # the sandboxes' private temporary folder (writable, TMPDIR)
    cwd: Path  # the Bash working-directory probes (bound writable, read back with care)

    @property
    def unreadable_file(self) -> str:
        return str(self.control / "unreadable")


_folders_lock = threading.Lock()


def folders() -> Folders:
    """The process's folders, made on first use. Under a lock: the read-only jail is made
    in a thread of its own while the loop's thread may ask too, and two callers of a bare
    ``functools.cache`` may each make (and keep using) folders of their own."""
    with _folders_lock:
        return _folders()


@functools.cache
def _folders() -> Folders:
    control = new_folder("toolrun-sandbox-")
    tmp = control / "tmp"
    tmp.mkdir()
    cwd = control / "cwd"
    cwd.mkdir(mode=0o700)
    stand_in = control / "unreadable"
    stand_in.touch()
    stand_in.chmod(0)
    atexit.register(shutil.rmtree, control, ignore_errors=True)
    return Folders(control, tmp, cwd)


def bwrap_argv(
    bwrap: str,
    plan: MountPlan,
    *,
    cwd: str,
    command: Sequence[str],
    unreadable_file: str,
    bind_files: Sequence[str] = (),
    seccomp_fd: int | None = None,
    clear_env: bool = False,
) -> list[str]:
    """``bwrap ... -- command``: ``bind_files`` are writable single paths (the cwd probes);
    ``clear_env``: ``command`` starts with an empty environment."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if clear_env:
        argv.append("--clearenv")
    # A fresh proc leaves the sysctls writable to uid 0 (core_pattern runs a program
    # as root on the host): they are read-only like the rest.
    # (/dev/shm needs no mount of its own: --dev's /dev is a private tmpfs.)
    argv += ["--ro-bind", "/proc/sys", "/proc/sys", *NAMESPACES]
    for path in plan.writable:
        argv += ["--bind", path, path]
    for path in plan.pinned:
        argv += ["--bind", path, path]
    for path in plan.read_only:
        argv += ["--ro-bind", path, path]
    masks = _masks(plan, unreadable_file)
    argv += masks
    argv += _readable_again(plan, masks)
    for path in bind_files:
        argv += ["--bind", path, path]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--chdir", cwd, "--", *command]
    return argv


def _masks(plan: MountPlan, unreadable_file: str) -> list[str]:
    argv: list[str] = []
    for path in plan.unreadable_dirs:
        # a mask that holds re-opened paths may be passed through (it lists nothing else)
        opened = any(p != path and is_within(p, path) for p in plan.readable_again)
        argv += ["--perms", "0711" if opened else "0000", "--tmpfs", path]
    for path in plan.unreadable_files:
        argv += ["--ro-bind", unreadable_file, path]
    return argv


def _readable_again(plan: MountPlan, masks: list[str]) -> list[str]:
    """Each ``allowRead`` path bound again as the plan had it: writable where it is under a
    writable root, read-only elsewhere, then every bind and mask of the plan under it, in
    the plan's order, so that what is more specific than the re-opened path still wins."""
    argv: list[str] = []
    for opened in plan.readable_again:
        writable = any(is_within(opened, w) for w in plan.writable)
        argv += ["--bind" if writable else "--ro-bind", opened, opened]
        for flag, paths in (
            ("--bind", plan.writable),
            ("--bind", plan.pinned),
            ("--ro-bind", plan.read_only),
        ):
            for path in paths:
                if path != opened and is_within(path, opened):
                    argv += [flag, path, path]
        argv += _masks_under(masks, opened)
    return argv


def _masks_under(masks: list[str], opened: str) -> list[str]:
    """The masks' arguments (``--perms P --tmpfs D`` and ``--ro-bind F path``) under ``opened``."""
    out: list[str] = []
    i = 0
    while i < len(masks):
        step = 4 if masks[i] == "--perms" else 3
        target = masks[i + step - 1]
        if target != opened and is_within(target, opened):
            out += masks[i : i + step]
        i += step
    return out


def seccomp_program_fd(program: bytes) -> int:
    """A pipe's read end holding the filter (bwrap reads it before the command starts)."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)  # a few hundred bytes: never blocks
    finally:
        os.close(write_end)
    return read_end
