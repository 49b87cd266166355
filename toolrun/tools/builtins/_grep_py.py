"""Grep without ripgrep: ripgrep's default file walk and line matching, in pure Python.

What is emulated: hidden files and folders are skipped; ``.gitignore``, ``.ignore``
and ``.rgignore`` files apply in the searched folder, below it and in its parents
(``.gitignore`` files not above the nearest folder holding ``.git``), with
ripgrep's precedence (``.rgignore`` over ``.ignore`` over ``.gitignore``, deeper
over shallower); ``glob`` overrides every other rule; ``type`` keeps matching
files; symlinks are not followed; files with a NUL byte are skipped unless named
directly. Not emulated: the global gitignore and ``.git/info/exclude`` (ripgrep
runs without them too), and ripgrep's binary detection in the middle of a big
file. Regexes are Python's ``re``; ripgrep's own syntax agrees on the common part.

The walk is here; the reading and matching is :mod:`_grep_scan`'s, in a process of its
own when the tool runs (:func:`search_apart`).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from toolrun.errors import ToolError
from toolrun.tools.builtins._grep_core import (
    FILE_TYPES,
    Found,
    Hits,
    Line,
    Query,
    invalid_regex,
    unknown_type,
)
from toolrun.tools.builtins._hidden import Hide
from toolrun.tools.builtins._ignore import RuleSet, Verdict

IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")  # highest precedence first


@dataclass(frozen=True, slots=True)
class _Level:
    """The ignore files of one folder."""

    folder: str
    sets: tuple[RuleSet | None, ...]
    has_git: bool

    @classmethod
    def load(cls, folder: str) -> _Level:
        sets: list[RuleSet | None] = []
        for name in IGNORE_FILES:
            try:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    sets.append(RuleSet.parse(folder, f.read().splitlines()))
            except OSError:
                sets.append(None)
        return cls(folder, tuple(sets), os.path.exists(os.path.join(folder, ".git")))


class _Filter:
    def __init__(self, query: Query, root: str) -> None:
        self.overrides = RuleSet.parse(root, [query.glob]) if query.glob else None
        self.whitelists = self.overrides is not None and self.overrides.has_plain
        self.types = FILE_TYPES[query.file_type] if query.file_type is not None else None

    def include(self, path: str, is_dir: bool, levels: list[_Level]) -> bool:
        name = os.path.basename(path)
        if self.overrides is not None:
            verdict = self.overrides.match(_relative(path, self.overrides.root), is_dir)
            if verdict is not None:  # inverted: a plain glob keeps, a `!glob` drops
                return verdict is Verdict.IGNORE
            if self.whitelists and not is_dir:
                return False
        verdict = _ignored(path, is_dir, levels)
        if verdict is Verdict.IGNORE:
            return False
        whitelisted = verdict is Verdict.WHITELIST
        if self.types is not None and not is_dir:
            if not any(fnmatch.fnmatchcase(name, t) for t in self.types):
                return False
            whitelisted = True
        return whitelisted or not name.startswith(".")


def _relative(path: str, folder: str) -> str:
    return os.path.relpath(path, folder)


def _ignored(path: str, is_dir: bool, levels: list[_Level]) -> Verdict | None:
    for kind in range(len(IGNORE_FILES)):
        is_gitignore = IGNORE_FILES[kind] == ".gitignore"
        for level in reversed(levels):
            rules = level.sets[kind]
            if rules is not None:
                verdict = rules.match(_relative(path, level.folder), is_dir)
                if verdict is not None:
                    return verdict
            if is_gitignore and level.has_git:
                break
    return None


def _ancestors(folder: str) -> list[_Level]:
    parents: list[str] = []
    current = os.path.dirname(folder)
    while True:
        parents.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return [_Level.load(p) for p in reversed(parents)]


def _walk(folder: str, levels: list[_Level], keep: _Filter) -> Iterator[str]:
    levels = [*levels, _Level.load(folder)]
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink():
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if not (is_dir or entry.is_file(follow_symlinks=False)):
            continue
        if not keep.include(entry.path, is_dir, levels):
            continue
        if is_dir:
            yield from _walk(entry.path, levels, keep)
        else:
            yield entry.path


def _compile(query: Query) -> re.Pattern[str]:
    flags = re.IGNORECASE if query.ignore_case else 0
    if query.multiline:
        flags |= re.MULTILINE | re.DOTALL
    try:
        return re.compile(query.pattern, flags)
    except re.error as e:
        raise invalid_regex(query.pattern, str(e)) from None


@dataclass(frozen=True, slots=True)
class Listing:
    """The files a search reads: the walk's, less those ``hide`` covers (``hidden``)."""

    paths: list[str]
    hidden: int
    explicit: bool  # the root is a file, named directly (searched even if binary)


def listing(query: Query, hide: Hide | None = None) -> Listing:
    """The files to search (blocking: the walk reads folders and ignore files)."""
    if query.file_type is not None and query.file_type not in FILE_TYPES:
        raise unknown_type(query.file_type)
    _compile(query)  # an invalid pattern is an error before anything is read
    root = query.root
    if query.root_is_dir:
        walked: Iterator[str] = _walk(root, _ancestors(root), _Filter(query, root))
        explicit = False
    else:
        walked, explicit = iter([root]), True
    paths: list[str] = []
    hidden = 0
    for path in walked:
        if hide is not None and hide(path):
            hidden += 1  # counted, never read
            continue
        paths.append(path)
    return Listing(paths, hidden, explicit)


def request(query: Query, files: Listing) -> dict[str, Any]:
    """What :mod:`_grep_scan` is asked to search."""
    return {
        "pattern": query.pattern,
        "ignore_case": query.ignore_case,
        "multiline": query.multiline,
        "before": query.before,
        "after": query.after,
        "first_match_only": query.first_match_only,
        "explicit": files.explicit,
        "paths": files.paths,
    }


def search(query: Query, hide: Hide | None = None) -> Found:
    """The hits, searched in this process (blocking; the tool searches in a process of
    its own, :func:`search_apart`); files ``hide`` covers are counted, not read."""
    from toolrun.tools.builtins._grep_scan import Scan

    files = listing(query, hide)
    scan = Scan(request(query, files))
    hits: Hits = {}
    for path in files.paths:
        found = scan.file(path)
        if found:
            hits[path] = {n: Line(text, hit) for n, (text, hit) in found.items()}
    return Found(hits, files.hidden, scan.cut)


#: How long the matching process may run when the call sets no timeout (its timeout,
#: Ctrl-C and SIGTERM end it sooner).
SCAN_LIMIT_S = 24 * 3600.0


async def search_apart(query: Query, hide: Hide | None = None) -> Found:
    """:func:`search` with the walk in a thread a cancel abandons and the matching in a
    process of its own, which the call's timeout, Ctrl-C and toolrun's end kill: a
    catastrophic pattern holds that process's GIL, not toolrun's."""
    import json
    import sys
    from functools import partial
    from pathlib import Path

    from toolrun.reaper.run import run_command
    from toolrun.tools.builtins._blocking import run_blocking

    files = await run_blocking(partial(listing, query, hide))
    if not files.paths:
        return Found({}, files.hidden)
    out, err = bytearray(), bytearray()
    script = str(Path(__file__).with_name("_grep_scan.py"))
    code = await run_command(
        [sys.executable or "python3", "-I", "-S", script],
        cwd=os.path.dirname(files.paths[0]) or "/",
        env={"PATH": os.environ.get("PATH", os.defpath)},
        time_limit=SCAN_LIMIT_S,
        stdout=out.extend,
        stderr=err.extend,
        stdin=json.dumps(request(query, files)).encode(),
    )
    lines = bytes(out).splitlines()
    if code != 0 or not lines or not lines[-1].startswith(b'{"cut"'):
        why = bytes(err).decode("utf-8", "replace").strip().splitlines()[-1:] or [
            f"exit status {code}"
        ]
        raise ToolError(f"the Python Grep engine failed: {why[0]}")
    hits: Hits = {}
    for raw in lines[:-1]:
        path, found = json.loads(raw)
        hits[path] = {n: Line(text, hit) for n, text, hit in found}
    return Found(hits, files.hidden, int(json.loads(lines[-1])["cut"]))
