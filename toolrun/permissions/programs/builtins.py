"""Shell builtins that look harmless but assign variables or evaluate code.

``trap ACTION SIG`` runs ACTION later; ``printf -v NAME`` assigns (``printf -v PATH
./bin; ls`` runs a planted ``ls``); ``test -v 'a[$(cmd)]'``, ``read``/``unset``/``printf
-v`` of ``a[...]`` evaluate the subscript as arithmetic, which runs its command
substitutions however the word was quoted.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from toolrun.permissions.programs.streams import is_stream
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset(
    {"alias", "hash", "source", ".", "trap", "printf", "test", "[", "read", "unset", "declare",
     "typeset", "local", "export", "readonly", "let", "mapfile", "readarray", "wait", "getopts",
     "shopt", "enable", "complete", "bind"}
)  # fmt: skip
#: A name with a subscript that is not a plain number (``a[i]``, ``a[$(cmd)]``).
_SUBSCRIPT = re.compile(r"\[[^\]]*[^0-9\]@*][^\]]*\]")
#: Builtins whose arguments name variables, subscripts included.
_NAMES_VARIABLES = frozenset(
    {"test", "[", "read", "unset", "declare", "typeset", "local", "export", "readonly",
     "mapfile", "readarray", "wait", "getopts", "printf"}
)  # fmt: skip


def runs_code(argv: tuple[Word, ...]) -> str | None:
    name = argv[0].value
    if name in ("source", ".") and len(argv) > 1:
        script = argv[1]
        # (`/dev/stdin`, `/dev/fd/N`, `<(...)`, `../../dev/stdin`: the string fed in)
        if is_stream(script):
            return f"{name} {script.raw} runs commands fed in by the command itself"
    if name == "trap" and len(argv) > 2:
        action = argv[1]
        if action.value is None or action.value not in ("-", "", "--"):
            return "trap runs its first argument as a command later"
    if name == "alias" and any("=" in (w.value or "=") for w in argv[1:]):
        return "alias makes a word run another command"
    if name == "hash" and any((w.value or "-p").startswith("-p") for w in argv[1:]):
        return "hash -p makes a command name run another program"
    if name == "let":
        return "let evaluates arithmetic, whose subscripts can run commands"
    if name in ("enable", "bind", "complete") and len(argv) > 1:
        return f"{name} can load code or bind commands"
    if name in _NAMES_VARIABLES:
        for word in argv[1:]:
            if word.value is not None and _SUBSCRIPT.search(word.value):
                return (
                    f"{name} evaluates the subscript of {word.raw} as arithmetic, "
                    "which can run commands"
                )
    return None


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    name = argv[0].value
    if name == "printf":
        for word in argv[1:]:
            if word.value is None or word.glob:
                return f"printf argument {word.raw} could become -v (an assignment)"
            if word.value == "--":
                break
            if word.value.startswith("-v"):
                return "printf -v assigns a variable"
            if not word.value.startswith("-"):
                break
    if name in ("test", "[") and any(w.value == "-v" for w in argv[1:]):
        return "test -v looks up a variable whose subscript can run commands"
    return None
