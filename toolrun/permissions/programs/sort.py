"""sort: ``-o FILE`` writes, ``--compress-program`` runs a program, ``--files0-from`` reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.programs import long_is, option_values, options, short_has
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"sort"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: Options whose next word is their value (that word is never read as an option).
VALUE_OPTIONS = frozenset(
    {"-k", "--key", "-t", "--field-separator", "-S", "--buffer-size", "--parallel"}
)  # fmt: skip


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    for opt in options(argv):
        if opt == "\x00":
            return "a sort option is only known when the command runs"
        if long_is(opt, "--compress-program"):
            return "sort --compress-program runs a program"
        if long_is(opt, "--output") or short_has(opt, "o"):
            return "sort -o writes a file"
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    return tuple(option_values(argv, "", ("--files0-from",)))
