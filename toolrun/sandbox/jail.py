"""The read-only jail: where a Bash call runs that toolrun itself judged read-only (#25).

A call allowed because toolrun read its command as read-only (no rule, hook or person
allowed it) runs where that reading is made true by the kernel: the whole filesystem
read-only, no network, no new privileges, a PID namespace of its own, and the paths the
Read rules deny masked. Reading an open language will always miss a spelling; the jail
does not depend on the reading.

One jail serves a whole run: a second reaper side process (:mod:`toolrun.reaper.side`)
is started *inside* bubblewrap and spawns every jailed command, so a call costs no new
bwrap (about 1.5 ms) but only what a call on the ordinary side process costs.

What differs from outside, on purpose:

- ``TMPDIR`` is a private tmpfs (``sort`` and ``mktemp`` need a place to write); ``/tmp``
  itself stays read-only like the rest, so reads there see what they see outside.
- The masks are the Read-denied paths as the tree held them when the jail was made (a
  file: an unreadable stand-in bound over it; a directory: an empty one with mode 000).
- The Bash tool's working-directory probe writes to a folder bound writable for that
  alone (:func:`take_cwd`: read back without following links).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolrun.sandbox.bwrap import NAMESPACES as SANDBOX_NAMESPACES
from toolrun.sandbox.violations import erofs_paths

#: The most entries one walk of the roots looks at for Read-denied paths (a jail made
#: after that many says so: ``JailPlan.truncated``).
WALK_LIMIT = 20_000
#: Directories never walked for masks: git's objects are read by git, not by name.
NOT_WALKED = frozenset({".git"})
#: The most a cwd probe file may hold (a path): a jailed command could grow it.
CWD_MAX = 1 << 16

#: The sandbox's own namespaces (toolrun.sandbox.bwrap). Here the side process is PID 1:
#: a command cannot kill it (PID 1 ignores signals it has no handler for), every orphan
#: comes to it, and when it ends the kernel kills the whole namespace.
NAMESPACES = SANDBOX_NAMESPACES


@dataclass(frozen=True, slots=True)
class JailFolders:
    """toolrun's folders for its jails: ``tmp`` is the jail's TMPDIR (a tmpfs inside),
    ``cwd`` holds the working-directory probes (the one writable place in the jail)."""

    base: Path
    tmp: Path
    cwd: Path


@functools.cache
def jail_folders() -> JailFolders:
    base = Path(tempfile.mkdtemp(prefix="toolrun-jail-"))
    tmp, cwd = base / "tmp", base / "cwd"
    tmp.mkdir()
    cwd.mkdir(mode=0o700)
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    return JailFolders(base, tmp, cwd)


@dataclass(frozen=True, slots=True)
class JailPlan:
    """What one jail masks; two plans that are equal make the same jail."""

    kind: str = "read-only"
    unreadable_dirs: tuple[str, ...] = ()
    unreadable_files: tuple[str, ...] = ()
    #: The walk stopped at :data:`WALK_LIMIT`: paths deeper in may be unmasked.
    truncated: bool = False


def plan_jail(
    roots: Sequence[str],
    denied: Callable[[str], bool],
    *,
    also: Iterable[str] = (),
    limit: int = WALK_LIMIT,
) -> JailPlan:
    """The masks of a read-only jail: every path under ``roots`` (and each of ``also``,
    the Read deny rules' literal paths) for which ``denied(path)`` holds.

    A denied directory is masked whole and not walked further. Symlinks are not followed
    (the path they lead to is walked where it is, if under a root); the mask goes on the
    real path, which is where a read through any spelling lands.
    """
    dirs: list[str] = []
    files: list[str] = []
    seen = 0
    truncated = False

    def mask(path: str) -> None:
        real = os.path.realpath(path)
        if os.path.isdir(real):
            dirs.append(real)
        elif os.path.exists(real):
            files.append(real)

    for path in also:
        if os.path.lexists(path):
            mask(path)
    stack = [os.path.realpath(r) for r in roots]
    while stack and not truncated:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > limit:
                truncated = True
                break
            if denied(entry.path):
                mask(entry.path)
            elif entry.name not in NOT_WALKED and entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return JailPlan(
        "read-only",
        tuple(sorted(set(dirs))),
        tuple(sorted(set(files) - set(dirs))),
        truncated,
    )


def jail_argv(
    bwrap: str,
    plan: JailPlan,
    folders: JailFolders,
    command: Sequence[str],
    *,
    unreadable_file: str,
    seccomp_fd: int | None = None,
) -> list[str]:
    """``bwrap ... -- command`` for a jail made from ``plan`` (a pure function)."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # A fresh proc leaves the sysctls writable to the namespace's root: read-only too.
    argv += ["--ro-bind", "/proc/sys", "/proc/sys", *NAMESPACES]
    argv += ["--tmpfs", str(folders.tmp), "--bind", str(folders.cwd), str(folders.cwd)]
    for path in plan.unreadable_dirs:
        argv += ["--perms", "0000", "--tmpfs", path]
    for path in plan.unreadable_files:
        argv += ["--ro-bind", unreadable_file, path]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--chdir", "/", "--", *command]
    return argv


def blocked_writes(output: str, cwd: str) -> list[str]:
    """``read-only jail: write to X blocked`` for each ``Read-only file system`` error in
    the output (a heuristic: the path the program quoted, resolved (symlinks too) against the
    call's final working directory; a program that names no path gives no line)."""
    return [
        f"read-only jail: write to {os.path.realpath(os.path.join(cwd, path))} blocked"
        for path in dict.fromkeys(erofs_paths(output))
    ]


def take_cwd(inside: str, outside: str) -> None:
    """Copy the jailed shell's final working directory to the Bash tool's own probe file.

    The jail's probe folder is writable from inside: the file is opened without
    following a link, must be a regular file, and only its first :data:`CWD_MAX` bytes
    are read (a jailed command could have put anything there).
    """
    try:
        fd = os.open(inside, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        text = os.read(fd, CWD_MAX)
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(inside)
    with contextlib.suppress(OSError), open(outside, "wb") as f:
        f.write(text)
