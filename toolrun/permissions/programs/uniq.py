"""uniq: a second operand is the output file it writes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.programs import options
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"uniq"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: Options whose next word is their value (that word is never read as an option).
VALUE_OPTIONS = frozenset(
    {"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"}
)  # fmt: skip
_VALUE = frozenset({"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"})


def operands(argv: tuple[Word, ...]) -> list[Word]:
    out: list[Word] = []
    words = argv[1:]
    i = 0
    done = False
    while i < len(words):
        text = words[i].text
        if not done and text == "--":
            done = True
        elif not done and text in _VALUE:
            i += 1
        elif done or not text.startswith("-") or text == "-":
            out.append(words[i])
        i += 1
    return out


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    if any(o == "\x00" for o in options(argv)):
        return "a uniq option is only known when the command runs"
    if len(operands(argv)) >= 2:
        return "uniq's second operand is a file it writes"
    return None
