"""tree: ``-o FILE`` writes, ``-R`` writes ``00Tree.html`` in every directory; files named
by ``--infofile``/``--gitfile``/``--hintro``/``--houtro`` are read; it reads whole trees.

tree parses its own options (tree 2.x): letters bundle, a letter's value is the next word
(never glued), long options are exact (``--opt X`` or ``--opt=X``), no abbreviations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.options import flag, spec, value
from toolrun.permissions.programs import parsed, unknown_file
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"tree"})
#: An option can write or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
SPEC = spec(
    *(flag(f"-{c}") for c in "adlfxRqNQpugshDFvtcUriASnCXJ"), value("-L"), value("-P"),
    value("-I"), value("-o"), value("-H"), value("-T"), flag("--gitignore"), value("--gitfile"),
    flag("--ignore-case"), flag("--matchdirs"), flag("--metafirst"), flag("--prune"),
    flag("--info"), value("--infofile"), flag("--noreport"), value("--charset"),
    value("--filelimit"), value("--timefmt"), flag("--si"), flag("--du"), flag("--inodes"),
    flag("--device"), flag("--dirsfirst"), flag("--filesfirst"), value("--sort"),
    flag("--nolinks"), value("--hintro"), value("--houtro"), flag("--fromfile"),
    flag("--fromtabfile"), flag("--fflinks"), flag("--condense"), value("--opt-toggle"),
    abbreviations=False, glued=False,
)  # fmt: skip


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    found = parsed(argv)
    if found is not None and found.has("--fromfile", "--fromtabfile"):
        return "tree --fromfile prints the contents of the files it is given"
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    return () if found is None else found.values("--infofile", "--gitfile", "--hintro",
                                                 "--houtro")


def option_writes(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    if found is None:
        return ()
    written = found.values("-o")
    if found.has("-R"):
        written += (unknown_file("(00Tree.html in every directory, tree -R)"),)
    return written


def recursive(argv: tuple[Word, ...]) -> bool:
    return True
