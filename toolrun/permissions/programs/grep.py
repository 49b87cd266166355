"""grep: every GNU grep 3 option; ``-f``/``--exclude-from`` read files; recursion spellings.

``-r``, ``-R``, ``-d recurse`` and ``--directories=recurse`` (or any unambiguous prefix
of ``recurse``: grep reads the value with argmatch) read whole trees.
"""

from __future__ import annotations

from toolrun.permissions.options import flag, optional, spec, value
from toolrun.permissions.programs import parsed
from toolrun.permissions.words import Word

NAMES = frozenset({"grep", "egrep", "fgrep", "zgrep"})
#: An option can read a file (never write or run): a word that might become one is never
#: trusted, but words xargs adds are only reads the resolver cannot check.
DANGEROUS_OPTIONS = "reads"
#: GNU grep 3.8's optstring and long options (``-NUM`` is context: digits are options).
SPEC = spec(
    flag("-E", "--extended-regexp"), flag("-F", "--fixed-strings", "--fixed-regexp"),
    flag("-G", "--basic-regexp"), flag("-P", "--perl-regexp"), value("-e", "--regexp"),
    value("-f", "--file"), flag("-i", "--ignore-case"), flag("-y"), flag("--no-ignore-case"),
    flag("-w", "--word-regexp"), flag("-x", "--line-regexp"), flag("-z", "--null-data"),
    flag("-s", "--no-messages"), flag("-v", "--invert-match"), flag("-V"),
    value("-m", "--max-count"), flag("-b", "--byte-offset"), flag("-n", "--line-number"),
    flag("--line-buffered"), flag("-H", "--with-filename"), flag("-h", "--no-filename"),
    value("--label"), flag("-o", "--only-matching"), flag("-q", "--quiet", "--silent"),
    value("--binary-files"), flag("-a", "--text"), flag("-I"), value("-d", "--directories"),
    value("-D", "--devices"), flag("-r", "--recursive"), flag("-R", "--dereference-recursive"),
    value("--include"), value("--exclude"), value("--exclude-from"), value("--exclude-dir"),
    flag("-L", "--files-without-match"), flag("-l", "--files-with-matches"),
    flag("-c", "--count"), flag("-T", "--initial-tab"), flag("-Z", "--null"),
    value("-B", "--before-context"), value("-A", "--after-context"), value("-C", "--context"),
    value("--group-separator"), flag("--no-group-separator"), optional("--color", "--colour"),
    flag("-U", "--binary"), flag("-u", "--unix-byte-offsets"), value("-X"),
    flag(*(f"-{d}" for d in "0123456789")),
)  # fmt: skip
#: Options that give the patterns: then the first operand is a file.
PATTERN_OPTIONS = frozenset({"-e", "-f"})


def _recurse(word: Word) -> bool:
    """``-d VALUE`` reads trees: ``recurse`` or a prefix only it has (or unknown: fail closed)."""
    text = word.value
    if text is None or word.glob:
        return True
    if text in ("read", "skip"):
        return False
    return not text or "recurse".startswith(text) or not any(
        v.startswith(text) for v in ("read", "skip")
    )


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    if found is None:
        return ()
    return tuple(w for w in found.values("-f", "--exclude-from") if w.value != "-")


def recursive(argv: tuple[Word, ...]) -> bool:
    found = parsed(argv)
    if found is None or found.error is not None:
        return True  # what toolrun cannot parse may recurse
    return found.has("-r", "-R") or any(_recurse(w) for w in found.values("-d"))
