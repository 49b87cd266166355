"""Gitignore-style patterns, as ripgrep reads them (``.gitignore`` files and ``--glob``),
matched by ``pathspec`` (git's own wildmatch rules: anchoring, ``**``, classes, ``!``,
trailing ``/``, the last matching pattern wins).

ripgrep's globs also take ``{a,b}`` alternatives, which git's do not: a pattern with
braces is expanded into one pattern per alternative first (same order, same ``!``), which
under "the last match wins" means the same thing.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


class Verdict(enum.Enum):
    IGNORE = "ignore"
    WHITELIST = "whitelist"


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The patterns of one ignore file (or of ``--glob``), relative to ``root``."""

    root: str
    spec: Any  # pathspec.GitIgnoreSpec (imported when a search needs it)

    @classmethod
    def parse(cls, root: str, lines: Iterable[str]) -> RuleSet:
        import pathspec

        expanded = [alt for line in lines for alt in expand_braces(_strip_eol(line))]
        return cls(root, pathspec.GitIgnoreSpec.from_lines(expanded))

    @property
    def has_plain(self) -> bool:
        """Is any pattern not negated? (ripgrep: then ``--glob`` keeps only what matches)"""
        return any(p.include is True for p in self.spec.patterns)

    def match(self, relative: str, is_dir: bool) -> Verdict | None:
        """IGNORE or WHITELIST by the last pattern that matches ``relative``, else None.

        A pattern matches the path itself, not through a parent folder it names (git's
        "the folder's contents too"): ripgrep checks each level on its own, and a
        ``--glob .*`` keeps ``.hidden/`` without keeping every file in it.
        """
        path = relative + "/" if is_dir else relative
        for pattern in reversed(self.spec.patterns):
            if pattern.include is None or pattern.regex is None:
                continue  # a blank line or a comment
            found = pattern.regex.match(path)
            if found is None or (found.groupdict().get("ps_d") and found.end() < len(path)):
                continue
            return Verdict.IGNORE if pattern.include else Verdict.WHITELIST
        return None


def _strip_eol(line: str) -> str:
    return line.removesuffix("\n").removesuffix("\r")


def expand_braces(pattern: str) -> list[str]:
    """``a{b,c}d`` → ``abd``, ``acd`` (nested too); escaped braces and a brace without
    its partner stay as they are; comments are left alone."""
    if pattern.startswith("#"):
        return [pattern]
    start = _unescaped(pattern, "{", 0)
    while start >= 0:
        depth, i = 0, start
        parts: list[str] = []
        last = start + 1
        while i < len(pattern):
            c = pattern[i]
            if c == "\\":
                i += 2
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    parts.append(pattern[last:i])
                    head, tail = pattern[:start], pattern[i + 1 :]
                    return [x for p in parts for x in expand_braces(head + p + tail)]
            elif c == "," and depth == 1:
                parts.append(pattern[last:i])
                last = i + 1
            i += 1
        start = _unescaped(pattern, "{", start + 1)  # unclosed: a literal brace
    return [pattern]


def _unescaped(text: str, char: str, start: int) -> int:
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == char:
            return i
        i += 1
    return -1
