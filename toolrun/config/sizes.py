"""Sizes in settings: ``64MiB``, ``1GB``, ``500kB`` or a plain number of bytes.

Units follow the usual convention: ``kB MB GB TB`` are powers of 1000, ``KiB MiB GiB
TiB`` powers of 1024; case does not matter. A bare ``K``, ``M`` or ``G`` is refused
rather than guessed: it means 10^6 to some tools and 2^20 to others.
"""

from __future__ import annotations

import re

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
#: A size as text (also the config schema's pattern, so editors check it the same way).
SIZE_PATTERN = r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([bB]|[kKmMgGtT][iI]?[bB])?\s*$"
_SIZE = re.compile(SIZE_PATTERN)
ACCEPTED = "a number of bytes or a size such as 64MiB, 500kB or 1GB"


def parse_size(value: object) -> int:
    """The number of bytes ``value`` names; ValueError (saying what is accepted) if none."""
    if isinstance(value, int) and not isinstance(value, bool):  # YAML's `yes` is no size
        if value < 0:
            raise ValueError(f"a size cannot be negative ({value})")
        return value
    match = _SIZE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(
            f"expected {ACCEPTED} (units: B, kB, MB, GB, KiB, MiB, GiB), not {value!r}"
        )
    return int(float(match.group(1)) * _UNITS[(match.group(2) or "").lower()])


def format_size(size: int) -> str:
    """``64 MiB``, ``1.5 GiB``, ``300 bytes``: how messages state a size."""
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor:
            amount = size / factor
            return f"{amount:.0f} {unit}" if amount.is_integer() else f"{amount:.1f} {unit}"
    return f"{size} bytes"
