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


#: Options that take no value (``-0``, ``-r``, ``-t``) are skipped as they come.
_GLUED = frozenset("ILnPsdEeai")


def command(argv: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """The command xargs runs (``echo`` when none is named); None when unknown."""
    words = argv[1:]
    i = 0
    while i < len(words):
        text = words[i].value
        if text is None:
            return None
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        if text in VALUE_OPTIONS:
            i += 2
            continue
        if text.startswith("--") or (len(text) > 2 and text[1] in _GLUED) or len(text) == 2:
            i += 1
            continue
        i += 1  # (a bundle of flags: -0rt)
    rest = words[i:]
    return rest if rest else (Word("echo", "echo"),)


def runs_code(argv: tuple[Word, ...]) -> str | None:
    """The command xargs runs gets words read from standard input: decided as that command
    with a word only known at run time (``xargs perl``, ``xargs sed`` can be given code)."""
    from toolrun.permissions import programs

    inner = command(argv)
    if inner is None:
        return "the command xargs runs is only known when the command runs"
    if not inner[0].is_static:
        return f"the command name {inner[0].raw} is computed at run time"
    if programs.options_matter(inner[0].value) and not programs.options_only_read(inner[0].value):
        # `echo '. -delete' | xargs find`, `xargs sed` given `-e 1e\ rm`: an option that
        # writes or runs can come from standard input
        return f"xargs gives {inner[0].raw} words from standard input, which can be options " \
            "that write or run programs"
    unknown = (*inner, Word("<words from stdin>", None))
    why = programs.runs_code(unknown) or programs.reads_program(unknown, False)
    if why is not None:
        return f"xargs gives its command words from standard input: {why}"
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    return tuple(option_values(argv, "a", ("--arg-file",)))
