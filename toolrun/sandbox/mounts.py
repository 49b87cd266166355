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
rename to put a fresh ``.git/hooks`` in their place.

The *configuration surface* (:data:`ROOT_SURFACE`, :data:`GIT_SURFACE`: one table for
the user's sandbox and every jail, #25) is what a later program reads and obeys outside
any sandbox: git's config, hooks and ``commondir``, toolrun's and Claude Code's settings,
an editor's folder (``.vscode/`` tasks run on open), ``.ripgreprc``. A missing entry is
held for the run by a read-only placeholder made first (an empty directory, or for the
few files git reads whatever their name, a file git reads as harmless), so that a command
cannot create it either; the placeholders are removed when the run ends.
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

#: The configuration surface at the top of every writable root: read-only, and held by a
#: placeholder when missing (an entry ending in ``/``: an empty directory, even for a file
#: name: config discovery skips a directory called ``toolrun.yaml``, git and ripgrep
#: one called ``.gitmodules`` or ``.ripgreprc``). The other protected names (shell rc
#: files, ``.husky``) are read-only where they exist.
ROOT_SURFACE = (
    ".git/", ".claude/", "toolrun.yaml/", "toolrun.yml/", ".mcp.json/",
    ".vscode/", ".idea/", ".gitmodules/", ".ripgreprc/",
)
#: Inside an existing ``.git`` directory: ``config`` and ``hooks/``; ``info/`` (attributes,
#: excludes); ``commondir`` names the repository whose config git loads; ``config.worktree``;
#: ``modules`` holds submodules' configs and hooks, ``worktrees/*/`` each linked worktree's
#: HEAD, commondir and config (#24). A missing entry with a placeholder (a ``/``: a
#: directory; else a file holding :data:`FILE_PLACEHOLDERS`' text) is held for the run; a
#: missing ``modules`` or ``worktrees`` is not (git makes them when it adds one, and
#: what goes in them is read-only once they exist).
GIT_SURFACE = ("hooks/", "config/", "info/", "commondir", "config.worktree", "modules",
               "worktrees")
#: Placeholders that must be files (a directory there makes every git command fail), and
#: the text each holds: ``commondir`` of ``.`` is the repository itself, an empty
#: ``config.worktree`` sets nothing.
FILE_PLACEHOLDERS = {"commondir": ".\n", "config.worktree": ""}
#: Entries of GIT_SURFACE never held when missing.
_NOT_HELD = frozenset({"modules", "worktrees"})
#: Back-compatible names (the surface above, by how a missing entry is held).
PLACEHOLDERS = ROOT_SURFACE
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
    for entry in ROOT_SURFACE:
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
    ours = {p.rstrip("/") for p in held_placeholders.current(git)}
    for entry in GIT_SURFACE:
        name = entry.rstrip("/")
        path = posixpath.join(git, name)
        if name not in _NOT_HELD and (path in ours or not os.path.lexists(path)):
            placeholders.append(path + "/" if entry.endswith("/") else path)
            read_only.append(path)
            continue
        real = trusted_realpath(path, writable)
        if real is not None and os.path.lexists(real) and _under_any(real, writable):
            read_only.append(real)
    for path in _hooks_path(git, root):
        real = trusted_realpath(path, writable)
        if real is None or not _under_any(real, writable):
            continue
        if os.path.lexists(real):
            read_only.append(real)
        elif os.path.isdir(posixpath.dirname(real)):
            placeholders.append(real + "/")  # git would run hooks put there
            read_only.append(real)


def _hooks_path(git: str, root: str) -> list[str]:
    """``core.hooksPath`` in the repository's config and the user's (``~/.gitconfig``, the
    XDG one: a relative one there is relative to the worktree): git runs the hooks there."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    paths = []
    for config in (posixpath.join(git, "config"), os.path.expanduser("~/.gitconfig"),
                   posixpath.join(xdg, "git", "config")):
        try:
            with open(config, encoding="utf-8", errors="replace") as f:
                text = f.read(1 << 20)
        except OSError:
            continue
        for value in _HOOKS_PATH.findall(text):
            value = value.strip('"')
            if value.startswith("~/"):
                value = os.path.expanduser(value)
            paths.append(os.path.normpath(posixpath.join(root, value)))
    return list(dict.fromkeys(paths))


# ------------------------------------------------------------------ placeholders


class _Placeholders:
    """Empty read-only stand-ins this process made; removed (if still empty) when it exits.

    They stay for the whole run: removing and making them again cost each call more
    than its command. Each is a directory, even for a file name (config discovery
    skips a directory called ``toolrun.yaml``, so one left behind by a killed run
    shadows nothing), but for git's few files that must be files
    (:data:`FILE_PLACEHOLDERS`: one left behind reads as harmless to git).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ours: set[str] = set()
        self._registered = False

    def current(self, folder: str) -> set[str]:
        """Ours, directly in ``folder`` (each still a missing entry for a call's plan)."""
        with self._lock:
            return {e for e in self._ours if posixpath.dirname(e.rstrip("/")) == folder}

    def ensure(self, entries: Sequence[str]) -> None:
        """Make each missing entry: ``path/`` an empty directory, ``path`` a file holding
        its :data:`FILE_PLACEHOLDERS` text."""
        with self._lock:
            if not self._registered and entries:
                self._registered = True
                atexit.register(self.remove_all)
            for entry in entries:
                path = entry.rstrip("/")
                if entry in self._ours:
                    continue
                # Read-only by its mount inside the sandbox; outside, the user's own
                # tools may still write there (and then it is theirs: never removed).
                with contextlib.suppress(OSError):
                    if entry.endswith("/"):
                        os.mkdir(path, 0o755)
                    else:
                        _make_file(path, _file_text(path))
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
                path = entry.rstrip("/")
                with contextlib.suppress(OSError):
                    if entry.endswith("/"):
                        os.rmdir(path)  # only if still empty
                    elif _read_small(path) == _file_text(path).encode():  # only if ours still
                        os.unlink(path)
            self._ours.clear()


def _file_text(path: str) -> str:
    return FILE_PLACEHOLDERS.get(posixpath.basename(path), "")


def _make_file(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o644)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _read_small(path: str) -> bytes | None:
    """The first bytes of a regular file (None for anything else), links not followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, 64) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    finally:
        os.close(fd)


held_placeholders = _Placeholders()
