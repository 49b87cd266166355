"""awk: programs that run commands (system, pipes, getline), write files, load code."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from toolrun.permissions.programs import option_values
from toolrun.permissions.programs.streams import is_stream
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: Options whose next word is their value (that word is never read as an option).
VALUE_OPTIONS = frozenset(
    {"-F", "--field-separator", "-v", "--assign"}
)  # fmt: skip
_VALUE_OPTIONS = frozenset(
    {
        "-F",
        "-v",
        "-f",
        "-e",
        "-i",
        "-l",
        "-W",
        "--source",
        "--include",
        "--load",
        "--file",
        "--field-separator",
        "--assign",
    }
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
    if option_values(argv, "f", ("--file",)) or option_values(argv, "il", ("--include", "--load")):
        return None
    given = option_values(argv, "e", ("--source",))
    if given:
        return given
    words = argv[1:]
    i = 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            return list(words[i + 1 : i + 2])
        if text in _VALUE_OPTIONS:
            i += 2
            continue
        if text.startswith("-") and text != "-":
            i += 1
            continue
        return [words[i]]
    return []


def runs_code(argv: tuple[Word, ...]) -> str | None:
    found = programs(argv)
    if found is None:
        return None
    for word in found:
        if word.value is not None and _RUNS.search(word.value):
            return "the awk program runs commands (system, pipes, getline) or loads code"
    return None


def reads_program(argv: tuple[Word, ...], stdin: bool) -> str | None:
    """``awk -f /dev/stdin <<< PROGRAM``: the program file is what the command feeds in."""
    for word in option_values(argv, "fi", ("--file", "--include")):
        if is_stream(word):
            return f"awk -f {word.raw} runs a program the command feeds it"
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
    return tuple(option_values(argv, "f", ("--file",)))
