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
"""

from __future__ import annotations

import bisect
import fnmatch
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from toolrun.tools.builtins._grep_core import (
    FILE_TYPES,
    Found,
    Hits,
    Line,
    Query,
    invalid_regex,
    split_lines,
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


def search(query: Query, hide: Hide | None = None) -> Found:
    """The hits; files ``hide`` covers are counted, not read."""
    if query.file_type is not None and query.file_type not in FILE_TYPES:
        raise unknown_type(query.file_type)
    regex = _compile(query)
    root = query.root
    if query.root_is_dir:
        keep = _Filter(query, root)
        paths = _walk(root, _ancestors(root), keep)
        explicit = False
    else:
        paths, explicit = iter([root]), True
    hits: Hits = {}
    hidden = 0
    for path in paths:
        if hide is not None and hide(path):
            hidden += 1
            continue
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if not explicit and b"\0" in data:
            continue
        found = _search_text(regex, data.decode("utf-8-sig", "replace"), query)
        if found:
            hits[path] = found
    return Found(hits, hidden)


def _search_text(regex: re.Pattern[str], text: str, query: Query) -> dict[int, Line]:
    lines = split_lines(text)
    matched = _multiline_matches(regex, text) if query.multiline else _line_matches(regex, lines)
    if query.first_match_only:
        matched = matched[:1]
    found = {n: Line(lines[n - 1], True) for n in matched}
    if matched and (query.before or query.after):
        for n in matched:
            for c in range(max(1, n - query.before), min(len(lines), n + query.after) + 1):
                if c not in found:
                    found[c] = Line(lines[c - 1], False)
    return found


def _line_matches(regex: re.Pattern[str], lines: list[str]) -> list[int]:
    return [n for n, line in enumerate(lines, start=1) if regex.search(line)]


def _multiline_matches(regex: re.Pattern[str], text: str) -> list[int]:
    """Every line that a match touches (1-based, sorted)."""
    if not text:
        return []
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    touched: set[int] = set()
    for m in regex.finditer(text):
        if m.start() == len(text) and text.endswith("\n"):
            continue  # the empty "line" after the final newline is not a line
        first = bisect.bisect_right(starts, m.start())
        last = bisect.bisect_right(starts, m.end() - 1) if m.end() > m.start() else first
        touched.update(range(first, last + 1))
    return sorted(touched)
