"""JSON from outside toolrun (hooks, verifiers, journals read back), decoded within bounds.

``json.loads`` recurses once per nesting level, so 3,000 brackets from a hostile hook
raise ``RecursionError`` (not a ``JSONDecodeError``), and a document a little less deep
decodes but breaks whatever walks it next. :func:`loads` refuses, with
:class:`~toolrun.errors.UntrustedJSONError` (a ``ValueError``, like a decode error), text
longer than ``max_bytes`` or nested deeper than ``max_depth`` *before* decoding it, so a
caller handles every bad output one way.

The depth check costs next to nothing for ordinary output: a text with no more brackets
than ``max_depth`` cannot be too deep. Otherwise its strings are cut out and the depth
counted over the brackets left, in one pass in C (about half of what decoding costs).
"""

from __future__ import annotations

import json
import operator
import re
from itertools import accumulate, count
from typing import Any

from toolrun.errors import UntrustedJSONError

MAX_DEPTH = 100  # as plans and configs (toolrun.yamlfile.MAX_DEPTH)

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEPS = str.maketrans({"[": "\x02", "{": "\x02", "]": "\x00", "}": "\x00"})


def too_deep(text: str, max_depth: int = MAX_DEPTH) -> bool:
    """Whether ``text`` (JSON, or something like it) nests brackets deeper than
    ``max_depth`` outside its strings (text that is not JSON may be judged either way:
    decoding it fails anyway)."""
    if text.count("[") + text.count("{") <= max_depth:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_STEPS).encode("latin-1")
    # an opening bracket is 2, a closing one 0: the running sum less the count so far is
    # the depth at each bracket (accumulate, map and count all run in C)
    deepest = max(map(operator.sub, accumulate(brackets), count(1)), default=0)
    return deepest > max_depth


def loads(
    text: str | bytes, *, max_bytes: int | None = None, max_depth: int = MAX_DEPTH
) -> Any:
    """``json.loads(text)`` within bounds; :class:`UntrustedJSONError` for text that is
    too long, too deep, not UTF-8 or not JSON (its message says which, with the
    decoder's position)."""
    if max_bytes is not None and len(text) > max_bytes:
        raise UntrustedJSONError(f"{len(text)} bytes of JSON, over the limit of {max_bytes}")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UntrustedJSONError(f"not UTF-8 (byte {exc.start})") from None
    if too_deep(text, max_depth):
        raise UntrustedJSONError(f"nested more than {max_depth} levels deep")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UntrustedJSONError(f"not valid JSON ({exc})") from None
    except RecursionError:  # (unbalanced text the check let through)
        raise UntrustedJSONError(f"nested more than {max_depth} levels deep") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise UntrustedJSONError(f"not usable JSON ({exc})") from None
