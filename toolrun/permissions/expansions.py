"""Expansions that run code or assign although they look like reading a variable.

Bash evaluates array subscripts, substring offsets, ``$((...))`` and the operands
of ``[[ a -eq b ]]`` as arithmetic, and arithmetic expands variables *recursively*
and runs the command substitutions it finds in their values
(``x='a[$(rm y)]'; [[ $x -eq 1 ]]``). ``${x@P}`` expands a value as a prompt (running
its substitutions), ``${x=...}`` assigns. Each function returns why a piece of a
command is not analysable, or None.
"""

from __future__ import annotations

import re

_NAME = re.compile(r"[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])")
_IDENTIFIER = re.compile(r"[A-Za-z_]")
_SAFE_SUBSCRIPT = re.compile(r"\[(?:[0-9]+|@|\*)\]")
_ARITH_OPERATORS = re.compile(r"(\S+)\s+-(?:eq|ne|lt|le|gt|ge)\s+(\S+)")
_INTEGER = re.compile(r"[+-]?[0-9]+")


def expansion_problem(text: str) -> str | None:
    """For one ``${...}`` expansion."""
    if not (text.startswith("${") and text.endswith("}")):
        return None
    inner = text[2:-1]
    if inner.startswith("!"):
        return f"{text} looks up a variable by a computed name, which can run commands"
    found = _NAME.match(inner)
    if found is None:
        return f"{text} is an expansion toolrun does not read"
    rest = inner[found.end() :]
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0 or not _SAFE_SUBSCRIPT.fullmatch(rest[: close + 1]):
            return f"the subscript in {text} is arithmetic, which can run commands"
        rest = rest[close + 1 :]
    if rest.startswith("@"):
        if rest[1:2] in ("P", "E", "A", "K", "k"):
            return f"{text} expands a value as code or quoted text (@{rest[1:2]})"
        return None
    if rest.startswith(("=", ":=")):
        return f"{text} assigns a variable"
    offset = rest.startswith(":") and rest[1:2] not in ("-", "+", "?", "=")
    if offset and _IDENTIFIER.search(rest):
        return f"the offset in {text} is arithmetic on variables, which can run commands"
    return None


def arithmetic_problem(text: str) -> str | None:
    """For one ``$((...))`` (or ``$[...]``): names in it are evaluated recursively."""
    if _IDENTIFIER.search(text.lstrip("$").strip("()[]").replace("0x", "").replace("0X", "")):
        return f"{text} evaluates variables as arithmetic, which can run commands"
    return None


def conditional_problem(text: str) -> str | None:
    """For one ``[[ ... ]]``: ``-v`` and arithmetic comparisons evaluate names."""
    if re.search(r"(?:^|\s)-v\s", text):
        return "[[ -v ]] evaluates a subscript, which can run commands"
    for found in _ARITH_OPERATORS.finditer(text):
        if not (_INTEGER.fullmatch(found.group(1)) and _INTEGER.fullmatch(found.group(2))):
            return "[[ a -eq b ]] evaluates its operands as arithmetic, which can run commands"
    if "((" in text:
        return "arithmetic inside [[ ]] can run commands"
    return None
