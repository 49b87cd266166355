"""awk: programs that run commands (system, pipes, getline), write files, load code."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from toolrun.permissions.options import Parsed, flag, optional, spec, value
from toolrun.permissions.programs import parsed
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: gawk 5's and mawk's options together (``awk`` is either); both stop at the program text.
SPEC = spec(
    value("-f", "--file"), value("-F", "--field-separator"), value("-v", "--assign"),
    flag("-b", "--characters-as-bytes"), flag("-c", "--traditional"), flag("-C", "--copyright"),
    optional("-d", "--dump-variables"), optional("-D", "--debug"), value("-e", "--source"),
    value("-E", "--exec"), flag("-g", "--gen-pot"), flag("-h"), value("-i", "--include"),
    flag("-I", "--trace"), flag("-k", "--csv"), value("-l", "--load"), optional("-L", "--lint"),
    flag("-M", "--bignum"), flag("-N", "--use-lc-numeric"), flag("-n", "--non-decimal-data"),
    optional("-o", "--pretty-print"), flag("-O", "--optimize"), optional("-p", "--profile"),
    flag("-P", "--posix"), flag("-r", "--re-interval"), flag("-s", "--no-optimize"),
    flag("-S", "--sandbox"), flag("-t", "--lint-old"), flag("-V"), value("-W"),
    permute=False,
)  # fmt: skip
#: mawk's -W values that change nothing toolrun checks.
#: Options that give the program text: then the first operand is a file.
PATTERN_OPTIONS = frozenset({"-f", "-e", "-E"})
_HARMLESS_W = ("version", "v", "dump", "interactive", "i", "posix_space", "usage", "sprintf",
               "random", "help")
#: Where gawk writes when -d/-o/-p name no file.
_DEFAULT_FILES = {"-d": "awkvars.out", "-o": "awkprof.out", "-p": "awkprof.out"}


def _code_from_files(found: Parsed) -> bool:
    """The program (or part of it) comes from a file toolrun does not read."""
    if found.has("-f", "-i", "-l", "-E", "-D"):
        return True
    return any(
        not (w.value or "-").split("=", 1)[0].startswith(_HARMLESS_W) for w in found.values("-W")
    )


_RUNS = re.compile(
    r"\bsystem\s*\(|\|\s*&|\|\s*getline|\b(?:print|printf)\b[^;{}\n]*\||@load|@include|"
    r"\bgetline\b[^;{}\n]*<|\bclose\s*\(|\bfflush\s*\("
)
_WRITES = re.compile(r"\b(?:print|printf)\b[^;{}\n]*>")
#: ARGV/ARGC name the files awk reads from inside the program: past the path checks.
_FILES = re.compile(r"\bARG[VC]\b|\bFILENAME\s*=")


def programs(argv: tuple[Word, ...]) -> list[Word] | None:
    """The program texts given on the command line; None when one is read from a file."""
    found = parsed(argv)
    if found is None or _code_from_files(found):
        return None
    given = found.values("-e")
    if given:
        return list(given)
    return list(found.operands[:1])


def runs_code(argv: tuple[Word, ...]) -> str | None:
    found = programs(argv)
    if found is None:
        # (``awk -f /dev/stdin <<< 'BEGIN{system("rm f")}'``: toolrun does not read it)
        return "awk runs a program from a file toolrun does not read"
    for word in found:
        if word.value is not None and _RUNS.search(word.value):
            return "the awk program runs commands (system, pipes, getline) or loads code"
    return None


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    found = programs(argv)
    if found is None:
        return "awk runs a program from a file toolrun does not read"
    for word in found:
        if word.value is None or word.glob:
            return f"awk program {word.raw} is only known when the command runs"
        if _RUNS.search(word.value) or _WRITES.search(word.value):
            return "the awk program runs commands or writes files"
        if _FILES.search(word.value):
            return "the awk program chooses the files it reads (ARGV, ARGC)"
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    return () if found is None else found.values("-f", "-i", "-E")


def option_writes(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    if found is None:
        return ()
    out: list[Word] = []
    for given in found.given:
        default = _DEFAULT_FILES.get(given.key)
        if default is not None:
            out.append(given.value if given.value is not None else Word(default, default))
    return tuple(out)
