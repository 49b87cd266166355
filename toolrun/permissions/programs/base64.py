"""base64 (and its cousins): ``-o``/``--output`` (BSD, macOS) writes a file.

GNU base64 refuses ``-o``; macOS writes it. The table holds both so the write is seen
wherever the command runs.
"""

from __future__ import annotations

from toolrun.permissions.options import flag, spec, value
from toolrun.permissions.programs import parsed
from toolrun.permissions.words import Word

NAMES = frozenset({"base64", "base32", "basenc"})
#: An option can write: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
_COMMON = (
    flag("-d", "-D", "--decode"), flag("-i", "--ignore-garbage"), value("-w", "--wrap"),
    value("-o", "--output"), value("--input"), value("-b", "--break"),
)  # fmt: skip
_BASENC = (
    flag("--base64"), flag("--base64url"), flag("--base32"), flag("--base32hex"),
    flag("--base16"), flag("--base2msbf"), flag("--base2lsbf"), flag("--z85"),
)  # fmt: skip
SPECS = {"base64": spec(*_COMMON), "base32": spec(*_COMMON), "basenc": spec(*_COMMON, *_BASENC)}


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    return () if found is None else found.values("--input")


def option_writes(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    return () if found is None else tuple(w for w in found.values("-o") if w.value != "-")
