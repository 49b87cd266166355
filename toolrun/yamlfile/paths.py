"""Paths into a document's data (``turns[1].calls[0]``), and where its strings hold a NUL."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

PathPart = str | int

NUL_MESSAGE = "holds a NUL character (\\u0000), which no path, command or argument can"

# how JSON and YAML write a NUL (neither lets one stand in a file as it is)
_NUL_ESCAPE = re.compile(r"\\(?:0|x00|u0000|U00000000)")


def format_path(path: Sequence[PathPart]) -> str:
    """``("turns", 1, "calls", 0, "input")`` → ``turns[1].calls[0].input``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def nul_paths(value: object, path: tuple[PathPart, ...] = ()) -> Iterator[tuple[PathPart, ...]]:
    """Where strings (keys included) hold a NUL: a path, command or argument with one cannot be
    resolved or run, so a call or a config that has one is refused when it is loaded."""
    if isinstance(value, str):
        if "\0" in value:
            yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and "\0" in key:
                yield (*path, key)
            yield from nul_paths(item, (*path, str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from nul_paths(item, (*path, i))


def may_hold_nul(text: str) -> bool:
    """False when no escape in ``text`` writes a NUL: no string of its data can hold one."""
    return "\\" in text and _NUL_ESCAPE.search(text) is not None
