"""grep: ``-f FILE`` reads patterns from a file; ``-r``/``-R`` read whole trees."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.programs import long_is, option_values, options, short_has
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"grep", "egrep", "fgrep", "zgrep"})


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    if any(o == "\x00" for o in options(argv)):
        return "a grep option is only known when the command runs"
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    return tuple(option_values(argv, "f", ("--file", "--exclude-from")))


def recursive(argv: tuple[Word, ...]) -> bool:
    return any(
        long_is(o, "--recursive")
        or long_is(o, "--dereference-recursive")
        or (short_has(o, "rR") and not o.startswith("--"))
        for o in options(argv)
    )
