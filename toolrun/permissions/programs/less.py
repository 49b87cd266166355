"""less/more: ``+cmd`` and ``-o``/``--log-file`` (``+!cmd`` runs a shell command)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.programs import long_is, options, short_has
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"less", "more"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    for opt in options(argv):
        if opt == "\x00":
            return "a less option is only known when the command runs"
        if opt.startswith("+"):
            return f"less {opt} runs less commands at start (+! runs a shell command)"
        if (
            short_has(opt, "oOk")
            or long_is(opt, "--log-file")
            or long_is(opt, "--LOG-FILE")
            or long_is(opt, "--lesskey-file")
            or long_is(opt, "--lesskey-src")
        ):
            return f"less {opt} writes a log file or reads key bindings"
    return None
