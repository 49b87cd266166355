"""What both Grep back ends share: the query, the hits, the file types and the output format.

Each back end (ripgrep, pure Python) only finds lines; formatting happens here
once, so both give byte-identical output for the same hits.

Files the permission rules keep from being read are dropped from the hits. How
many were dropped counts every such file the search *would have read* (whether it
matched or not): a count of hidden files that matched would tell, pattern after
pattern, what a hidden file contains.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from typing import Literal, NamedTuple

from toolrun.errors import ToolError
from toolrun.tools.builtins._hidden import Hide

OutputMode = Literal["content", "files_with_matches", "count"]


@dataclass(frozen=True, slots=True)
class Query:
    pattern: str
    root: str
    root_is_dir: bool = True
    glob: str | None = None
    file_type: str | None = None
    ignore_case: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0
    #: Only whether a file matches is needed (files_with_matches).
    first_match_only: bool = False


class Line(NamedTuple):
    text: str
    is_match: bool


#: path -> line number -> line. Only files with at least one match appear.
Hits = dict[str, dict[int, Line]]


class Found(NamedTuple):
    """What a back end found: the hits it may show, how many files it kept hidden, and
    how many lines (multiline: files) were searched in their first part only."""

    hits: Hits
    hidden: int = 0
    cut: int = 0


def drop_hidden(hits: Hits, searched: Iterable[str], hide: Hide) -> Found:
    """``hits`` without the files ``hide`` covers; ``hidden`` counts those among every
    file searched (and any hit path missing from ``searched``, to fail closed)."""
    hidden: set[str] = set()
    checked: set[str] = set()
    for path in chain(searched, hits):
        if path not in checked:
            checked.add(path)
            if hide(path):
                hidden.add(path)
    return Found({p: lines for p, lines in hits.items() if p not in hidden}, len(hidden))


#: File types known to both back ends (ripgrep's definitions for these names).
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "c": ("*.[chH]", "*.[chH].in", "*.cats"),
    "cpp": ("*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in",
            "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"),
    "css": ("*.css", "*.scss"),
    "go": ("*.go",),
    "html": ("*.ejs", "*.htm", "*.html"),
    "java": ("*.java", "*.jsp", "*.jspx", "*.properties"),
    "js": ("*.js", "*.jsx", "*.vue"),
    "json": ("*.json", "composer.lock"),
    "md": ("*.markdown", "*.md", "*.mdown", "*.mkdn"),
    "markdown": ("*.markdown", "*.md", "*.mdown", "*.mkdn"),
    "py": ("*.py",),
    "rust": ("*.rs",),
    "sh": ("*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh",
           "*.zsh", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc",
           ".kshrc", ".login", ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout",
           ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout", "bash_profile",
           "bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"),
    "sql": ("*.psql", "*.sql"),
    "toml": ("*.toml", "Cargo.lock"),
    "ts": ("*.ts", "*.tsx"),
    "txt": ("*.txt",),
    "yaml": ("*.yaml", "*.yml"),
}  # fmt: skip


def unknown_type(name: str) -> ToolError:
    return ToolError(f"unknown file type {name!r}")


def invalid_regex(pattern: str, detail: str) -> ToolError:
    return ToolError(f"invalid regex {pattern!r}: {detail}")


def check_pattern(pattern: str, multiline: bool) -> None:
    """Reject a line break in a single-line search (ripgrep refuses it too)."""
    if not multiline and ("\n" in pattern or re.search(r"(?<!\\)(?:\\\\)*\\n", pattern)):
        raise ToolError("the pattern contains a line break; set multiline to search across lines")


def split_lines(text: str) -> list[str]:
    """Lines without their ``\\n`` terminators (no empty line after a final newline)."""
    if not text:
        return []
    return text.removesuffix("\n").split("\n")


def display(line: str) -> str:
    return line.removesuffix("\r")


def format_hits(
    hits: Hits,
    mode: OutputMode,
    *,
    line_numbers: bool,
    context: bool,
    head_limit: int | None,
) -> tuple[str, int]:
    """The output text and the number of lines before ``head_limit`` applied."""
    lines: list[str] = []
    if mode == "files_with_matches":
        lines = sorted(hits)
    elif mode == "count":
        lines = [f"{p}:{sum(line.is_match for line in hits[p].values())}" for p in sorted(hits)]
    else:
        previous: int | None = None
        for path in sorted(hits):
            for number in sorted(hits[path]):
                text, is_match = hits[path][number]
                if context and lines and (previous is None or number != previous + 1):
                    lines.append("--")
                previous = number
                sep = ":" if is_match else "-"
                where = f"{path}{sep}{number}{sep}" if line_numbers else f"{path}{sep}"
                lines.append(where + display(text))
            previous = None
    total = len(lines)
    if head_limit:
        lines = lines[:head_limit]
    return ("\n".join(lines) if lines else "No matches found"), total
