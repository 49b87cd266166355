"""uniq: a second operand is the output file it writes."""

from __future__ import annotations

from toolrun.permissions.options import flag, optional, spec, value
from toolrun.permissions.programs import parsed
from toolrun.permissions.words import Word

NAMES = frozenset({"uniq"})
#: An option can write: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: GNU coreutils 9 uniq (``-N`` and ``+N`` are the obsolete skip forms).
SPEC = spec(
    flag("-c", "--count"), flag("-d", "--repeated"), flag("-D"), optional("--all-repeated"),
    value("-f", "--skip-fields"), optional("--group"), flag("-i", "--ignore-case"),
    value("-s", "--skip-chars"), flag("-u", "--unique"), flag("-z", "--zero-terminated"),
    value("-w", "--check-chars"),
    numbers=r"[-+]\d+",
)  # fmt: skip


def operands(argv: tuple[Word, ...]) -> list[Word]:
    found = parsed(argv)
    return [] if found is None else list(found.operands)


def option_writes(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    # `uniq IN OUT` writes OUT (`-` is standard output).
    found = operands(argv)
    return tuple(w for w in found[1:2] if w.value != "-")
