"""ripgrep: ``--pre`` and ``--hostname-bin`` run programs, ``-z`` runs decompressors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.programs import long_is, option_values, options, short_has
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"rg"})
#: ripgrep reads options from this file: `--pre=CMD` runs a program (envcode reads this).
CODE_ENV = frozenset({"RIPGREP_CONFIG_PATH"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: Options whose next word is their value (that word is never read as an option).
VALUE_OPTIONS = frozenset(
    {"-e", "--regexp", "-g", "--glob", "--iglob", "-t", "--type", "-T", "--type-not", "-A",
     "-B", "-C", "-m", "--max-count", "-M", "--max-columns", "-j", "--threads", "-r",
     "--replace", "--max-depth", "-d"}
)  # fmt: skip
_RUNS = ("--pre", "--hostname-bin", "--search-zip")


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    for opt in options(argv):
        if opt == "\x00":
            return "an rg option is only known when the command runs"
        for name in _RUNS:
            if long_is(opt, name, abbreviations=False):
                return f"rg {name} runs other programs"
        if short_has(opt, "z") and not opt.startswith("--"):
            return "rg -z runs decompression programs"
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    return tuple(option_values(argv, "f", ("--file", "--ignore-file"), abbreviations=False))


def recursive(argv: tuple[Word, ...]) -> bool:
    return True
