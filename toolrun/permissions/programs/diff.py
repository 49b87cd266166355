"""diff: ``--from-file``/``--to-file`` and ``-X`` read files; ``-r`` compares whole trees.

GNU diffutils 3.8's options (``-NUM`` is the obsolete context count: digits are options;
``--from`` is ``--from-file``: getopt_long takes unambiguous prefixes).
"""

from __future__ import annotations

from toolrun.permissions.options import flag, optional, spec, value
from toolrun.permissions.programs import parsed
from toolrun.permissions.words import Word

NAMES = frozenset({"diff"})
#: An option can read a file: a word that might become one is never trusted.
DANGEROUS_OPTIONS = "reads"  # (diff neither writes nor runs a program)
_FORMATS = tuple(
    value(f"--{kind}-{what}-format")
    for what in ("group", "line")
    for kind in ("old", "new", "unchanged", *(("changed",) if what == "group" else ()))
)
SPEC = spec(
    flag("--normal"), flag("-q", "--brief"), flag("-s", "--report-identical-files"),
    flag("-c"), value("-C"), optional("--context"), flag("-u"), value("-U"),
    optional("--unified"), flag("-e", "--ed"), flag("-f", "--forward-ed"), flag("-n", "--rcs"),
    flag("-y", "--side-by-side"), value("-W", "--width"), flag("--left-column"),
    flag("--suppress-common-lines"), flag("-p", "--show-c-function"),
    value("-F", "--show-function-line"), value("-L", "--label"), flag("-t", "--expand-tabs"),
    flag("-T", "--initial-tab"), value("--tabsize"), flag("--suppress-blank-empty"),
    flag("-l", "--paginate"), flag("-r", "--recursive"), flag("--no-dereference"),
    flag("-N", "--new-file"), flag("-P", "--unidirectional-new-file"),
    flag("--ignore-file-name-case"), flag("--no-ignore-file-name-case"),
    value("-x", "--exclude"), value("-X", "--exclude-from"), value("-S", "--starting-file"),
    value("--from-file"), value("--to-file"), flag("-i", "--ignore-case"),
    flag("-E", "--ignore-tab-expansion"), flag("-Z", "--ignore-trailing-space"),
    flag("-b", "--ignore-space-change"), flag("-w", "--ignore-all-space"),
    flag("-B", "--ignore-blank-lines"), value("-I", "--ignore-matching-lines"),
    flag("-a", "--text"), flag("--strip-trailing-cr"), value("-D", "--ifdef"), *_FORMATS,
    value("--line-format"), flag("-d", "--minimal"), value("--horizon-lines"),
    flag("-H", "--speed-large-files"), optional("--color"), value("--palette"),
    flag("-h"), flag("-v"), flag("--binary"),
    flag(*(f"-{d}" for d in "0123456789")),
)  # fmt: skip


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    if found is None:
        return ()
    return found.values("--from-file", "--to-file", "-X")


def recursive(argv: tuple[Word, ...]) -> bool:
    found = parsed(argv)
    return found is None or found.error is not None or found.has("-r")
