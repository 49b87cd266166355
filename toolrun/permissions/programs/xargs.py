"""xargs: runs a command with arguments read from standard input.

Those arguments are unknown, and can be options (``echo -delete | xargs find .``),
so xargs is never read-only. Deny and ask rules see the command it runs (xargs is a
wrapper in ``bash.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.programs import option_values
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"xargs"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: Options whose next word is their value (that word is never read as an option).
VALUE_OPTIONS = frozenset(
    {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-e", "-a", "--max-args", "--max-procs",
     "--max-lines", "--max-chars", "--delimiter", "--eof", "--replace", "--arg-file"}
)  # fmt: skip


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    return "xargs runs a command with arguments from standard input"


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    return tuple(option_values(argv, "a", ("--arg-file",)))
