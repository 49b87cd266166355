"""less/more: ``+cmd`` and ``-o``/``--log-file`` (``+!cmd`` runs a shell command)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from toolrun.permissions.programs import long_is, options, short_has
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"less", "more"})
#: less(1) ENVIRONMENT VARIABLES: input preprocessors (LESSOPEN='|cmd %s'), options read
#: at start (LESS='+!cmd'), key files (their #env section sets LESSOPEN), the editor `v`
#: runs, the history file it writes (envcode reads this).
CODE_ENV = frozenset(
    {"LESS", "LESSOPEN", "LESSCLOSE", "LESSKEY", "LESSKEYIN", "LESSKEY_SYSTEM",
     "LESSKEYIN_SYSTEM", "LESSKEY_CONTENT", "LESSEDIT", "LESSHISTFILE", "MORE"}
)  # fmt: skip


def harmless_env(name: str, value: str, _env: Mapping[str, str | None]) -> bool:
    """``LESS=-R``, ``LESSHISTFILE=-``: display flags, no history file."""
    from toolrun.permissions.envcode import plain_program

    if name in ("LESS", "MORE"):
        return plain_program(f"less {value}")
    if name == "LESSHISTFILE":
        return value in ("-", "/dev/null")
    return False


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
