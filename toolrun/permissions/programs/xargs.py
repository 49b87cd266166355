"""xargs: runs a command with arguments read from standard input.

Those arguments are unknown, and can be options (``echo -delete | xargs find .``),
so xargs is never read-only. :func:`command` finds the command it runs, for deny and
ask rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"xargs"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: Options whose next word is their value (that word is never read as an option).
VALUE_OPTIONS = frozenset(
    {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-e", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--delimiter", "--eof", "--replace"}
)  # fmt: skip
_VALUE = frozenset(
    {
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "-d",
        "-E",
        "-a",
        "-e",
        "-i",
        "-l",
        "--max-args",
        "--max-procs",
        "--max-lines",
        "--max-chars",
        "--delimiter",
        "--arg-file",
        "--eof",
        "--replace",
        "--process-slot-var",
    }
)


def command(argv: tuple[Word, ...]) -> tuple[Word, ...] | None:
    words = argv[1:]
    i = 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            i += 1
            break
        if text in _VALUE:
            i += 2
        elif text.startswith("-"):
            i += 1
        else:
            break
    rest = tuple(words[i:])
    return rest or None


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    return "xargs runs a command with arguments from standard input"


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    from toolrun.permissions.programs import option_values

    return tuple(option_values(argv, "a", ("--arg-file",)))
