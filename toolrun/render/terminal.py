"""Text for a terminal: one line per record, escaped, or cut to a width with ``…`` (the
tables at a terminal wrap instead: :mod:`toolrun.render.layout`)."""

from __future__ import annotations

import re
from collections.abc import Callable

# Control characters (C0 but tab, DEL, C1), the Unicode line and paragraph separators
# and the bidirectional overrides: a line break would split a record (str.splitlines
# splits at U+2028 too), an escape sequence would drive the terminal, a bidi override
# would show text in another order than it is. They print as `\n`, `\r`, `\xNN`, `\uNNNN`.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r"}

# A painter colours a cell's text by the status it shows (None: no colour).
Painter = Callable[[str, str], str]


def one_line(text: str) -> str:
    """``text`` as one line: control characters escaped, tabs as spaces."""
    return _CONTROL.sub(lambda m: _NAMED.get(m[0], _escape(m[0])), text).replace(
        "\t", " "
    )


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, ending in ``…`` when it was cut."""
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"
