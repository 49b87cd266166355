"""Static shell words as paths: what a word names, as the kernel will be given it.

The shared word/path layer under the bash analyser and the programs' knowledge
(``programs/git`` resolves its ``-C`` and pathspec words here): it knows words, paths,
tildes and globs, never commands, so nothing here imports the analyser.
"""

from __future__ import annotations

import glob
import posixpath
import threading

from toolrun.permissions.observe import Observation, current, observe
from toolrun.permissions.paths import ResolvedPath, realpath, resolve
from toolrun.permissions.tilde import TildeError, expand_tilde
from toolrun.permissions.words import Word

#: A glob that matches more files than this is not checked file by file.
MAX_GLOB_MATCHES = 2000

def word_text(word: Word, cwd: str | None, home: str) -> str | None:
    """The absolute path a static shell word names, exactly as the kernel will be given
    it (``..`` not folded: where it leads depends on the disk); None when it depends
    on run time.

    An unquoted tilde prefix is expanded as bash expands it (``~``, ``~user``, ``~+``;
    ``~-`` and the directory stack are refused: not known before the command runs).
    """
    if not word.is_static or word.value is None or not word.value:
        return None
    value = word.value
    if word.tilde:
        try:
            value = expand_tilde(value, home=home, cwd=cwd)
        except TildeError:
            return None
    if value.startswith("~"):
        value = "./" + value  # a quoted ~ (or ~nosuchuser) is a file named ~...
    if value.startswith("/"):
        return value
    if cwd is None:
        return None
    return cwd.rstrip("/") + "/" + value


#: One word's path as a decision found it: (word, cwd, home, path, what it read; None
#: when no recording saw it read).
_Found = tuple[Word, str | None, str, ResolvedPath | None, tuple[Observation, ...] | None]


class _Decision(threading.local):
    # (a class default: a missing attribute is slow)
    paths: dict[int, _Found] | None = None


_decision = _Decision()


def remember_paths() -> dict[int, _Found] | None:
    """From now until :func:`forget_paths`, this thread's ``word_path`` of one Word (the
    same object, cwd and home) is resolved once: the read-only check and the subjects of
    one Bash decision resolve the same words, and nothing can change the tree between
    them. Returns what to hand to :func:`forget_paths`."""
    outer = _decision.paths
    _decision.paths = {}
    return outer


def forget_paths(outer: dict[int, _Found] | None) -> None:
    _decision.paths = outer


def word_path(word: Word, cwd: str | None, home: str) -> ResolvedPath | None:
    """The path a static shell word names, resolved as the kernel resolves it from ``cwd``
    (``$PWD``); None when it depends on run time."""
    found = _decision.paths
    if found is None:
        return _word_path(word, cwd, home)
    recording = current()
    hit = found.get(id(word))
    if hit is not None and hit[0] is word and hit[1] == cwd and hit[2] == home:
        if recording is None:
            return hit[3]
        if hit[4] is not None:
            # (what it read is noted again: a decision or part remembered with it
            # re-checks it, as if it had been read now)
            recording.log.extend(hit[4])
            return hit[3]
    if recording is None:
        path = _word_path(word, cwd, home)
        found[id(word)] = (word, cwd, home, path, None)
        return path
    first, opaque = len(recording.log), recording.opaque
    path = _word_path(word, cwd, home)
    log = None if recording.opaque and not opaque else tuple(recording.log[first:])
    found[id(word)] = (word, cwd, home, path, log)
    return path


def _word_path(word: Word, cwd: str | None, home: str) -> ResolvedPath | None:
    joined = word_text(word, cwd, home)
    if joined is not None and "proc/" in joined[:16]:  # (also //proc, /./proc)
        joined = proc_self(joined, cwd)
    return resolve(joined, "/", home) if joined is not None else None


_PROC = ("/proc/", "/dev/fd/")
#: The magic links of /proc/PID/ (proc(5)) that lead to another file or directory.
_PROC_LINKS = frozenset({"cwd", "root", "fd", "map_files", "exe", "fdinfo"})


def proc_self(path: str, cwd: str | None) -> str | None:
    """``/proc/self/cwd/.env`` is ``.env`` of the *command's* directory (the kernel's magic
    link); toolrun's own ``realpath`` would read toolrun's. ``/proc/self/root`` is ``/``.
    Another process's cwd or root, or a descriptor of one: toolrun cannot tell (None)."""
    parts = [p for p in path.split("/") if p and p != "."]  # ['proc', 'self', 'cwd', ...]
    if parts[:1] == ["proc"] and ".." in parts[:3]:
        return None  # /proc/self/../self/cwd: a walk through toolrun's own /proc
    if parts[:1] != ["proc"] or len(parts) < 3:
        return path  # /dev/fd/N: a descriptor the command's redirections opened (checked)
    who, what, rest = parts[1], parts[2], parts[3:]
    if what not in _PROC_LINKS:
        return path  # /proc/self/status, /proc/cpuinfo: no link to follow
    if who not in ("self", "thread-self") or what not in ("cwd", "root"):
        return None
    if what == "root":
        inner = "/" + "/".join(rest)
        return proc_self(inner, cwd) if inner.startswith(_PROC) else inner
    if cwd is None:
        return None
    # (the kernel's cwd is the physical directory: the link resolves to it)
    return posixpath.join(realpath(cwd), *rest)


def expand_glob(word: Word, cwd: str | None, home: str) -> list[str] | None:
    """The file names an unquoted glob word matches right now (bash's default options).

    Empty when nothing matches (bash then keeps the word as it is); None when it cannot
    be known (dynamic parts, unknown directory, POSIX classes, too many matches).
    """
    if word.value is None:
        return None
    pattern = word.value
    if word.tilde:
        try:
            pattern = expand_tilde(pattern, home=home, cwd=cwd)
        except TildeError:
            return None
    if "[:" in pattern or "[=" in pattern or "[." in pattern:
        return None  # POSIX classes: Python's glob would match less than bash
    pattern = pattern.replace("[^", "[!")  # bash's [^...] is Python's [!...]
    prefix = ""
    if not pattern.startswith("/"):
        if cwd is None:
            return None
        prefix = cwd.rstrip("/") + "/"
    elif pattern.startswith("/proc/"):
        # (Python's glob would list toolrun's own /proc/self, not the command's)
        mapped = proc_self(pattern, cwd)
        if mapped is None:
            return None
        pattern = mapped
    return observe(_glob, prefix, pattern)


def _glob(prefix: str, pattern: str) -> list[str] | None:
    found: list[str] = []
    for i, match in enumerate(glob.iglob(glob.escape(prefix) + pattern)):
        if i >= MAX_GLOB_MATCHES:
            return None
        found.append(match[len(prefix) :])
    return sorted(found)


def glob_matches(word: Word, cwd: str | None, home: str) -> tuple[ResolvedPath, ...] | None:
    """The paths a glob word names: its matches, or the word itself when nothing matches."""
    found = expand_glob(word, cwd, home)
    if found is None:
        return None
    if not found:
        path = word_path(Word(word.raw, word.value, False, word.tilde), cwd, home)
        return (path,) if path is not None else None
    base = cwd or "/"
    return tuple(resolve(m, base, home) for m in found)


def glob_directory(word: Word, cwd: str | None, home: str) -> ResolvedPath | None:
    """For a glob word (``dir/*.py``), the directory it expands in; None when dynamic."""
    if word.value is None:
        return None
    value = word.value
    head, _, _ = value.partition("*")
    head = head.split("?")[0].split("[")[0]
    directory = posixpath.dirname(head) if "/" in head else "."
    if directory == "":
        directory = "/"
    return word_path(Word(directory, directory, False, word.tilde), cwd, home)
