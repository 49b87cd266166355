"""tree: ``-o FILE`` writes; ``--fromfile`` reads a listing; it reads whole trees."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.programs import options, short_has
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"tree"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: Options whose next word is their value (that word is never read as an option).
VALUE_OPTIONS = frozenset(
    {"-I", "-P", "-L", "--filelimit", "--charset", "--timefmt", "-H"}
)  # fmt: skip


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    for opt in options(argv):
        if opt == "\x00":
            return "a tree option is only known when the command runs"
        if short_has(opt, "o"):
            return "tree -o writes a file"
        if opt.split("=", 1)[0] in ("--fromfile", "--infofile"):
            return f"tree {opt} reads files named elsewhere"
    return None


def recursive(argv: tuple[Word, ...]) -> bool:
    return True
