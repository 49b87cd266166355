"""Gitignore-style patterns, as ripgrep reads them (``.gitignore`` files and ``--glob``).

A pattern without a slash matches a name at any depth; with a slash (leading or
inner) it is anchored to the folder it belongs to. ``*`` and ``?`` stay inside one
path segment, ``**`` spans segments, ``[...]`` is a class, ``{a,b}`` alternates,
a trailing ``/`` matches folders only, ``!`` negates, and the last matching
pattern wins.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass


class Verdict(enum.Enum):
    IGNORE = "ignore"
    WHITELIST = "whitelist"


@dataclass(frozen=True, slots=True)
class Rule:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The patterns of one ignore file (or of ``--glob``), relative to ``root``."""

    root: str
    rules: tuple[Rule, ...]

    @classmethod
    def parse(cls, root: str, lines: Iterable[str]) -> RuleSet:
        return cls(root, tuple(r for r in map(compile_rule, lines) if r is not None))

    def match(self, relative: str, is_dir: bool) -> Verdict | None:
        """IGNORE or WHITELIST by the last pattern that matches ``relative``, else None."""
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(relative):
                return Verdict.WHITELIST if rule.negated else Verdict.IGNORE
        return None


def compile_rule(line: str) -> Rule | None:
    """One gitignore line as a rule, or None for blanks and comments."""
    line = line.removesuffix("\n").removesuffix("\r")
    if not line or line.startswith("#"):
        return None
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    negated = line.startswith("!")
    if negated or line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    if "/" in line:
        line = line.removeprefix("/")
    elif not line.startswith("**"):
        line = "**/" + line
    return Rule(re.compile(glob_to_regex(line), re.DOTALL), negated, dir_only)


def glob_to_regex(glob: str) -> str:
    """A regex (for ``fullmatch``) equivalent to a gitignore-style glob over a relative path."""
    out: list[str] = []
    i, n = 0, len(glob)
    depth = 0  # open braces
    while i < n:
        c = glob[i]
        if glob.startswith("**", i):
            at_start = i == 0 or glob[i - 1] == "/"
            j = i + 2
            if at_start and j == n:
                out.append(".*")
            elif at_start and glob[j] == "/":
                out.append("(?:.*/)?")
                j += 1
            else:
                out.append("[^/]*")
            i = j
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = _class_end(glob, i)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : end]
                if body.startswith(("!", "^")):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    out.extend(")" * depth)
    return "".join(out)


def _class_end(glob: str, start: int) -> int:
    """Index of the ``]`` closing the class opened at ``start``, or -1."""
    i = start + 1
    if i < len(glob) and glob[i] in "!^":
        i += 1
    if i < len(glob) and glob[i] == "]":
        i += 1
    return glob.find("]", i)
