"""sort: ``-o FILE`` writes, ``--compress-program`` runs a program, ``--files0-from`` reads
the files named in a file, ``-T DIR`` writes temporary files there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.options import flag, optional, spec, value
from toolrun.permissions.programs import parsed, unknown_files
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"sort"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: GNU coreutils 9 sort (``+POS`` is the obsolete key syntax).
SPEC = spec(
    flag("-b", "--ignore-leading-blanks"), flag("-d", "--dictionary-order"),
    flag("-f", "--ignore-case"), flag("-g", "--general-numeric-sort"),
    flag("-i", "--ignore-nonprinting"), flag("-M", "--month-sort"),
    flag("-h", "--human-numeric-sort"), flag("-n", "--numeric-sort"),
    flag("-R", "--random-sort"), value("--random-source"), flag("-r", "--reverse"),
    value("--sort"), flag("-V", "--version-sort"), value("--batch-size"), flag("-c"),
    optional("--check"), flag("-C"), value("--compress-program"), flag("--debug"),
    value("--files0-from"), value("-k", "--key"), flag("-m", "--merge"),
    value("-o", "--output"), flag("-s", "--stable"), value("-S", "--buffer-size"),
    value("-t", "--field-separator"), value("-T", "--temporary-directory"),
    value("--parallel"), flag("-u", "--unique"), flag("-z", "--zero-terminated"),
    numbers=r"\+\d+(?:\.\d+)?[bdfgiMhnRrV]*",
)  # fmt: skip


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    found = parsed(argv)
    if found is None:
        return None
    if found.has("--compress-program"):
        return "sort --compress-program runs a program"
    if found.has("-T"):
        return "sort -T writes temporary files in a directory"
    if found.has("--files0-from"):
        return "sort --files0-from reads the files named inside a file"
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    if found is None:
        return ()
    lists = found.values("--files0-from")
    return (*lists, *found.values("--random-source"), *unknown_files(lists))


def option_writes(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    return () if found is None else found.values("-o")
