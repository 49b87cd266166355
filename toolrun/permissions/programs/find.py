"""find: actions that run programs, delete or write files; tests that read files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"find"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: Options whose next word is their value (that word is never read as an option).
VALUE_OPTIONS = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
     "-lname", "-ilname", "-type", "-xtype", "-maxdepth", "-mindepth", "-size", "-mtime",
     "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-user", "-group", "-perm", "-uid", "-gid",
     "-links", "-inum", "-newer", "-samefile", "-printf", "-regextype", "-fstype", "-used"}
)  # fmt: skip
#: Actions that run a program, delete, or write a file (GNU find; BSD find adds -delete too).
ACTIONS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
#: Tests whose argument is a file that find reads (stat) — a read, checked like any other.
_FILE_TESTS = frozenset({"-newer", "-anewer", "-cnewer", "-samefile", "-files0-from"})


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    for word in argv[1:]:
        if word.value is None or word.glob:
            continue  # words bash expands are refused before (readonly.option_words)
        if word.value in ACTIONS:
            return f"find {word.value} runs commands or changes files"
        if word.value.startswith("-newer") and len(word.value) == 8:
            continue  # -newerXY reference forms read a file, like -newer
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    out: list[Word] = []
    words = argv[1:]
    for k, word in enumerate(words[:-1]):
        text = word.text
        if text in _FILE_TESTS or (text.startswith("-newer") and len(text) == 8):
            out.append(words[k + 1])
            if text == "-files0-from":
                # the starting points are named inside the file: unknown here
                out.append(Word(f"(the paths named in {words[k + 1].raw})", None))
    return tuple(out)


#: Actions whose next word is a file find writes (``-fprintf FILE FORMAT``).
_WRITE_ACTIONS = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})


def option_writes(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    words = argv[1:]
    out: list[Word] = []
    for k, word in enumerate(words):
        if word.value in _WRITE_ACTIONS:
            # (a missing file is find's error: nothing is written)
            out.extend(words[k + 1 : k + 2])
    return tuple(out)


def recursive(argv: tuple[Word, ...]) -> bool:
    return True
