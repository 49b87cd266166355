"""What a sandboxed call may write, what it may not read, and the placeholders that guard it.

Every path is bound at its real location (symlinks resolved), because that is
where a write through any spelling of it lands. A path whose resolution passes
through a symlink that sits in a writable place is not trusted: a command in an
earlier call may have planted it (``ws/out -> /etc``), so it is left out.

Protected entries at the top of every writable root (``.git/hooks``,
``.git/config``, ``.claude``, ``toolrun.yaml``, shell rc files: the names in
:data:`toolrun.permissions.paths.PROTECTED_DIRS` and ``PROTECTED_FILES``) are
bound read-only over the writable root. Their writable parents (``.git``) are
bound onto themselves, so that they become mount points the command cannot
rename to put a fresh ``.git/hooks`` in their place. The configuration files a
later run would load (and whose hooks run unsandboxed) are created empty and
read-only (as empty directories) when missing, and removed when the run ends.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import posixpath
import re
import stat
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from toolrun.permissions.paths import PROTECTED_DIRS, PROTECTED_FILES

#: Missing entries held by an empty read-only directory while sandboxed calls run.
PLACEHOLDERS = (".git/", ".claude/", "toolrun.yaml/", "toolrun.yml/", ".mcp.json/")
#: Inside an existing ``.git`` directory (``modules`` holds submodules' hooks and configs).
GIT_PROTECTED = ("hooks/", "config")
#: Read-only where they exist (a missing one gets no placeholder: a directory where git
#: expects the file ``commondir`` or ``config.worktree`` would make every git command fail).
#: ``info/`` holds attributes and excludes, ``commondir`` names the repository whose config
#: git loads, ``worktrees/*/`` each linked worktree's HEAD and ``config.worktree`` (#24).
GIT_READ_ONLY = ("modules", "info", "commondir", "worktrees", "config.worktree")
_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_MAX_LINKS = 40


@dataclass(frozen=True, slots=True)
class MountPlan:
    """The binds of one call, in the order bwrap applies them (later ones win)."""

    writable: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()  # writable directories bound onto themselves
    read_only: tuple[str, ...] = ()
    unreadable_dirs: tuple[str, ...] = ()
    unreadable_files: tuple[str, ...] = ()
    placeholders: tuple[str, ...] = ()  # empty read-only stand-ins to make first
    skipped: tuple[str, ...] = field(default=(), compare=False)  # paths left out, and why
    #: ``filesystem.allowRead`` paths inside an unreadable directory, most general first:
    #: each is bound again after the masks, with the binds under it (the more specific
    #: entry wins, a deny inside an allowed path included)
    readable_again: tuple[str, ...] = ()


def is_within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def trusted_realpath(path: str, writable: Sequence[str]) -> str | None:
    """``path`` with symlinks resolved, or None when a symlink on the way sits in ``writable``.

    A missing tail is kept as written (its parent is what must be trusted).
    """
    parts = [p for p in path.split("/") if p]
    resolved = "/"
    links = 0
    while parts:
        name = parts.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            resolved = posixpath.dirname(resolved)
            continue
        candidate = posixpath.join(resolved, name)
        try:
            st = os.lstat(candidate)
        except OSError:
            return posixpath.join(candidate, *parts) if parts else candidate
        if stat.S_ISLNK(st.st_mode):
            if any(is_within(candidate, root) for root in writable):
                return None
            links += 1
            if links > _MAX_LINKS:
                return None
            target = os.readlink(candidate)
            parts = [p for p in target.split("/") if p] + parts
            if target.startswith("/"):
                resolved = "/"
            continue
        resolved = candidate
    return resolved


def plan_mounts(
    *,
    roots: Sequence[str],
    allow_write: Sequence[str] = (),
    deny_write: Sequence[str] = (),
    deny_read: Sequence[str] = (),
    allow_read: Sequence[str] = (),
    extra_writable: Sequence[str] = (),
) -> MountPlan:
    """The binds for writable ``roots`` (workspace, additional directories) and the settings.

    ``extra_writable`` (the private temporary folder) is writable but not guarded.
    """
    skipped: list[str] = []
    bases = [os.path.realpath(r) for r in roots]
    declared = [*bases, *(os.path.normpath(p) for p in allow_write), *extra_writable]
    writable: list[str] = list(dict.fromkeys(bases))
    for path in allow_write:
        others = [d for d in declared if d != os.path.normpath(path)]
        real = trusted_realpath(path, others)
        if real is None:
            skipped.append(f"{path}: resolves through a symlink in a writable place")
        elif not os.path.isdir(real) and not os.path.isfile(real):
            skipped.append(f"{path}: does not exist")
        elif real not in writable:
            writable.append(real)
    guarded = list(writable)
    writable.extend(p for p in extra_writable if p not in writable)

    pinned: list[str] = []
    read_only: list[str] = []
    placeholders: list[str] = []
    for root in guarded:
        _guard(root, writable, pinned, read_only, placeholders)
    for path in deny_write:
        real = trusted_realpath(path, writable)
        if real is not None and os.path.lexists(real) and _under_any(real, writable):
            read_only.append(real)
    unreadable_dirs: list[str] = []
    unreadable_files: list[str] = []
    for path in deny_read:
        real = trusted_realpath(path, writable)
        if real is None:
            # Fail closed: the spelling we were given is what a command would read.
            real = os.path.normpath(path)
        if os.path.isdir(real):
            unreadable_dirs.append(real)
        elif os.path.exists(real):
            unreadable_files.append(real)
    dirs = tuple(dict.fromkeys(unreadable_dirs))
    masked = set(dirs) | set(unreadable_files)
    again: list[str] = []
    for path in allow_read:
        real = trusted_realpath(path, writable)
        # Re-opened only strictly inside a masked directory; an exact deny entry wins.
        if real is None or real in masked or not os.path.exists(real):
            continue
        if any(real != d and is_within(real, d) for d in dirs):
            again.append(real)
    return MountPlan(
        readable_again=tuple(sorted(set(again), key=lambda p: (p.count("/"), p))),
        writable=tuple(writable),
        pinned=tuple(dict.fromkeys(pinned)),
        read_only=tuple(dict.fromkeys(read_only)),
        unreadable_dirs=dirs,
        unreadable_files=tuple(dict.fromkeys(unreadable_files)),
        placeholders=tuple(dict.fromkeys(placeholders)),
        skipped=tuple(skipped),
    )


def _under_any(path: str, roots: Iterable[str]) -> bool:
    return any(is_within(path, r) for r in roots)


def _guard(
    root: str,
    writable: Sequence[str],
    pinned: list[str],
    read_only: list[str],
    placeholders: list[str],
) -> None:
    try:
        names = {entry.name for entry in os.scandir(root)}
    except OSError:
        return
    # Our placeholders are missing entries for this call's plan too.
    names -= {posixpath.basename(p.rstrip("/")) for p in held_placeholders.current(root)}
    for name in sorted(names & (PROTECTED_DIRS | PROTECTED_FILES) - {".git"}):
        real = trusted_realpath(posixpath.join(root, name), writable)
        if real is not None and os.path.lexists(real) and _under_any(real, writable):
            read_only.append(real)
    for entry in PLACEHOLDERS:
        name = entry.rstrip("/")
        if name not in names:
            placeholders.append(posixpath.join(root, entry))
            read_only.append(posixpath.join(root, name))
    git = posixpath.join(root, ".git")
    if ".git" not in names:
        return
    if os.path.islink(git) or not os.path.isdir(git):
        read_only.append(git)  # a gitfile names the real repository: keep it pointing there
        return
    pinned.append(git)
    ours = held_placeholders.current(git)
    for entry in GIT_PROTECTED:
        path = posixpath.join(git, entry.rstrip("/"))
        if not os.path.lexists(path) or path + "/" in ours:
            placeholders.append(path + "/")
            read_only.append(path)
            continue
        real = trusted_realpath(path, writable)
        if real is not None and _under_any(real, writable):
            read_only.append(real)
    hooks_path = _hooks_path(git, root)
    for path in [*(posixpath.join(git, n) for n in GIT_READ_ONLY), *hooks_path]:
        real = trusted_realpath(path, writable)
        if real is None or not _under_any(real, writable):
            continue
        if os.path.lexists(real):
            read_only.append(real)
        elif path in hooks_path and os.path.isdir(posixpath.dirname(real)):
            placeholders.append(real + "/")  # git would run hooks put there
            read_only.append(real)


def _hooks_path(git: str, root: str) -> list[str]:
    """``core.hooksPath`` in the repository's config: git runs the hooks found there."""
    try:
        with open(posixpath.join(git, "config"), encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        return []
    paths = []
    for value in _HOOKS_PATH.findall(text):
        value = value.strip('"')
        if value.startswith("~/"):
            value = os.path.expanduser(value)
        paths.append(os.path.normpath(posixpath.join(root, value)))
    return paths


# ------------------------------------------------------------------ placeholders


class _Placeholders:
    """Empty read-only stand-ins this process made; removed (if still empty) when it exits.

    They stay for the whole run: removing and making them again cost each call more
    than its command. Each is a directory, even for a file name: config discovery
    skips a directory called ``toolrun.yaml``, so one left behind by a killed run
    shadows nothing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ours: set[str] = set()

    def current(self, folder: str) -> set[str]:
        """Ours, directly in ``folder`` (each still a missing entry for a call's plan)."""
        with self._lock:
            return {e for e in self._ours if posixpath.dirname(e.rstrip("/")) == folder}

    def ensure(self, entries: Sequence[str]) -> None:
        with self._lock:
            if not self._ours and entries:
                atexit.register(self.remove_all)
            for entry in entries:
                path = entry.rstrip("/")
                if entry in self._ours:
                    continue
                # Read-only by its mount inside the sandbox; outside, the user's own
                # tools may still write there (and then it is theirs: never removed).
                with contextlib.suppress(OSError):
                    os.mkdir(path, 0o755)
                    self._ours.add(entry)

    def hold(self, plan: MountPlan) -> MountPlan:
        """Make the plan's placeholders; the plan without those that could not be made.

        One we could not make (a read-only workspace) cannot be made inside either.
        """
        if not plan.placeholders:
            return plan
        self.ensure(plan.placeholders)
        kept = tuple(p for p in plan.read_only if os.path.lexists(p))
        return replace(plan, read_only=kept)

    def remove_all(self) -> None:
        with self._lock:
            for entry in sorted(self._ours, reverse=True):  # .git/hooks before .git
                with contextlib.suppress(OSError):
                    os.rmdir(entry.rstrip("/"))  # only if still empty
            self._ours.clear()


held_placeholders = _Placeholders()
