"""base64 (and its cousins): ``-o``/``--output`` (BSD, macOS) writes a file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.programs import long_is, options, short_has
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"base64", "base32", "basenc"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: Options whose next word is their value (that word is never read as an option).
VALUE_OPTIONS = frozenset(
    {"-w", "--wrap"}
)  # fmt: skip


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    for opt in options(argv):
        if opt == "\x00":
            return "a base64 option is only known when the command runs"
        if long_is(opt, "--output") or short_has(opt, "o"):
            return "base64 -o writes a file"
    return None
