"""The jails: where a Bash call runs that toolrun itself judged safe, or bypass allowed (#25).

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

Three kinds, one design (a side process inside bubblewrap, one jail per kind per run):

- ``read-only`` (the read-only set): nothing writable, no network.
- ``workspace`` (acceptEdits' workspace file commands and redirects): the workspace and
  ``additionalDirectories`` writable, as the user's sandbox binds them
  (:func:`toolrun.sandbox.mounts.plan_mounts`: its configuration surface, Edit-denied and
  protected paths read-only, missing ones held), and each root's whole ``.git`` read-only
  (nothing judged a workspace write may write there: it is a protected path); everything
  else read-only, a private TMPDIR, no network.
- ``masks`` (what bypassPermissions allows, outside the user's sandbox): a jail of its own
  rather than the workspace jail widened, because bypass asked for the machine as it is:
  the whole filesystem writable (``/dev`` the host's), the network and Unix sockets as
  configured (no namespace, no filter), the user's TMPDIR; what a jail cannot give back
  is new privileges (``sudo`` fails) and other PID namespaces' processes (``kill`` of a
  process the call did not start). Only the rules are kept, as in
  every jail: Read-denied paths masked; Edit-denied paths, the configuration surface of
  every root and the protected entries of ``$HOME`` that exist (rc files, ``.ssh``)
  read-only; toolrun's own folders read-only. It keeps a command's reading of a secret or
  its write to a hook from happening, not a process that asks a service outside (a daemon
  over a socket, ssh) to do it: bypass lets those through, as configured.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import stat
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from toolrun.permissions.paths import PROTECTED_DIRS, PROTECTED_FILES
from toolrun.sandbox.bwrap import NAMESPACES as SANDBOX_NAMESPACES
from toolrun.sandbox.mounts import MountPlan, held_placeholders, plan_mounts
from toolrun.sandbox.violations import erofs_paths
from toolrun.tempdirs import new_folder

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
#: The masks-only jail shares the host's network (bypass runs the network as configured).
SHARED_NET = tuple(n for n in NAMESPACES if n != "--unshare-net")

#: What each kind of jail is called in results (``read-only jail: write to X blocked``).
PLACES = {"read-only": "read-only jail", "workspace": "workspace jail",
          "masks": "masks-only jail"}
KINDS = tuple(PLACES)
#: The read-only jail binds nothing writable (a frozen plan: one shared default).
NO_MOUNTS = MountPlan()


@dataclass(frozen=True, slots=True)
class JailFolders:
    """toolrun's folders for its jails: ``tmp`` is the jail's TMPDIR (a tmpfs inside),
    ``cwd`` holds the working-directory probes (the one writable place in the jail)."""

    base: Path
    tmp: Path
    cwd: Path


_folders_lock = threading.Lock()


def jail_folders() -> JailFolders:
    """The process's jail folders, made once. Under a lock: jails are made in a thread of
    their own while the loop's thread may ask too, and two callers of a bare cache could
    each make folders, one bound into the jail and the other written by the cwd probe."""
    with _folders_lock:
        return _jail_folders()


@functools.cache
def _jail_folders() -> JailFolders:
    base = new_folder("toolrun-jail-")
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
    #: The writable kinds: the roots bound writable and what stays read-only in them.
    mounts: MountPlan = NO_MOUNTS

    @property
    def place(self) -> str:
        return PLACES.get(self.kind, f"{self.kind} jail")


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


def widen(
    plan: JailPlan,
    kind: str,
    *,
    roots: Sequence[str],
    deny_write: Sequence[str] = (),
    home: str | None = None,
) -> JailPlan:
    """``plan`` (the masks) made into a jail of ``kind``: for the writable kinds, the
    user's sandbox binds for ``roots`` (the configuration surface, Edit-denied and
    protected paths read-only, missing ones held by placeholders made now)."""
    if kind == "read-only":
        return replace(plan, kind=kind)
    mounts = plan_mounts(roots=roots, deny_write=deny_write)
    extra: list[str] = []
    if kind == "workspace":
        for root in mounts.writable:
            git = os.path.join(root, ".git")
            if os.path.isdir(git) and not os.path.islink(git):
                extra.append(git)  # whole: no judged workspace write goes there
    elif home is not None:
        extra += _protected_entries(home)
    mounts = held_placeholders.hold(replace(mounts, read_only=(*extra, *mounts.read_only)))
    return replace(plan, kind=kind, mounts=mounts)


def _protected_entries(folder: str) -> list[str]:
    """The protected names that exist directly in ``folder`` (rc files, ``.ssh``): ``$HOME``
    gets no placeholders (they would be folders in the user's home for the whole run)."""
    try:
        names = {entry.name for entry in os.scandir(folder)}
    except OSError:
        return []
    real = os.path.realpath(folder)
    return [os.path.join(real, n) for n in sorted(names & (PROTECTED_DIRS | PROTECTED_FILES))]


def jail_argv(
    bwrap: str,
    plan: JailPlan,
    folders: JailFolders,
    command: Sequence[str],
    *,
    unreadable_file: str,
    seccomp_fd: int | None = None,
    own: Sequence[str] = (),
) -> list[str]:
    """``bwrap ... -- command`` for a jail made from ``plan`` (a pure function).

    ``own``: toolrun's folders, read-only in the masks-only jail (elsewhere all is)."""
    masks_only = plan.kind == "masks"
    if masks_only:
        argv = [bwrap, "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"]
    else:
        argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # A fresh proc leaves the sysctls writable to the namespace's root: read-only too.
    argv += ["--ro-bind", "/proc/sys", "/proc/sys", *(SHARED_NET if masks_only else NAMESPACES)]
    mounts = plan.mounts
    for path in (*mounts.writable, *mounts.pinned):
        argv += ["--bind", path, path]
    for path in mounts.read_only:
        argv += ["--ro-bind", path, path]
    if masks_only:
        for path in (str(folders.base), *own):
            argv += ["--ro-bind", path, path]
    else:
        argv += ["--tmpfs", str(folders.tmp)]
    argv += ["--bind", str(folders.cwd), str(folders.cwd)]
    for path in plan.unreadable_dirs:
        argv += ["--perms", "0000", "--tmpfs", path]
    for path in plan.unreadable_files:
        argv += ["--ro-bind", unreadable_file, path]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--chdir", "/", "--", *command]
    return argv


def blocked_writes(output: str, cwd: str, place: str = "read-only jail") -> list[str]:
    """``read-only jail: write to X blocked`` (``place``: the jail's name) for each
    ``Read-only file system`` error in the output (a heuristic: the path the program
    quoted, resolved (symlinks too) against the call's final working directory; a program
    that names no path gives no line)."""
    return [
        f"{place}: write to {os.path.realpath(os.path.join(cwd, path))} blocked"
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
