"""Tables via tabulate, imported only when a table is actually printed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=list(headers), tablefmt="simple", disable_numparse=True)


def fixed_row(cells: Sequence[str], widths: Sequence[int]) -> str:
    """One row of a table printed as it goes: cells padded to set widths (a longer cell
    pushes the rest along rather than being cut), the last one as it is."""
    padded = [c.ljust(w) for c, w in zip(cells, widths, strict=False)]
    return "  ".join([*padded, *cells[len(widths) :]]).rstrip()
