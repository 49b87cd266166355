"""sed: in-place edits, and script commands that write (w W), read (r R) or run (e).

The script is scanned command by command (addresses, ``s///`` and ``y///`` parts and
``a i c`` text skipped), so ``/error/p`` is not mistaken for the ``e`` command; what
the scanner cannot follow counts as dangerous.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.options import flag, optional, spec, value
from toolrun.permissions.programs import parsed
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"sed", "gsed"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: GNU sed 4.9's options (``-i`` takes its suffix glued only: ``-i.bak``, ``-ie`` is suffix e).
SPEC = spec(
    flag("-n", "--quiet", "--silent"), flag("--debug"), value("-e", "--expression"),
    value("-f", "--file"), flag("--follow-symlinks"), optional("-i", "--in-place"),
    value("-l", "--line-length"), flag("--posix"), flag("-E", "-r", "--regexp-extended"),
    flag("-s", "--separate"), flag("--sandbox"), flag("-u", "--unbuffered"),
    flag("-z", "--null-data"), flag("-b", "--binary"),
)  # fmt: skip
#: Options that give the script: then the first operand is a file.
PATTERN_OPTIONS = frozenset({"-e", "-f"})
_FILE_COMMANDS = frozenset("wWrR")
_LABEL_COMMANDS = frozenset("btT:")
_TEXT_COMMANDS = frozenset("aic")
_SIMPLE = frozenset("=dDgGhHlnNpPqQxzF")


def _delimited(script: str, i: int, delim: str) -> int:
    """Index just past the next unescaped ``delim`` from ``i`` (len(script)+1 if none)."""
    while i < len(script):
        c = script[i]
        if c == "\\":
            i += 2
            continue
        if c == delim:
            return i + 1
        i += 1
    return len(script) + 1


def _address(script: str, i: int) -> int:
    if i < len(script) and script[i] == "/":
        return _delimited(script, i + 1, "/")
    if i + 1 < len(script) and script[i] == "\\":
        return _delimited(script, i + 2, script[i + 1])
    while i < len(script) and (script[i].isdigit() or script[i] in "$~+"):
        i += 1
    return i


def _text_end(script: str, i: int) -> int:
    """End of the text of ``a``/``i``/``c``: the first newline not after a backslash."""
    if script.startswith("\\\n", i):
        i += 2
    while i < len(script):
        if script[i] == "\\":
            i += 2
            continue
        if script[i] == "\n":
            return i
        i += 1
    return len(script)


def commands(script: str) -> tuple[set[str], set[str]]:
    """(command letters, s/// flags) in ``script``; ``?`` marks what could not be followed."""
    found: set[str] = set()
    flags: set[str] = set()
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!":
            i += 1
            continue
        if c == "#":
            i = script.find("\n", i)
            i = n if i < 0 else i
            continue
        start = i
        i = _address(script, i)
        if i < n and script[i] == ",":
            i = _address(script, i + 1)
        while i < n and script[i] in " \t!":
            i += 1
        if i > n:
            found.add("?")
            break
        if i == n:
            if i != start:
                found.add("?")
            break
        c = script[i]
        found.add(c)
        if c in "sy":
            if i + 1 >= n or script[i + 1] in "\\\n":
                found.add("?")
                break
            delim = script[i + 1]
            j = _delimited(script, i + 2, delim)
            j = _delimited(script, j, delim)
            if j > n:
                found.add("?")
                break
            k = j
            while k < n and script[k] not in ";\n}":
                k += 1
            if c == "s":
                flags.update(script[j:k].strip().partition("w")[0])
                if "w" in script[j:k]:
                    flags.add("w")
                    k = script.find("\n", k)  # the file name runs to the end of the line
                    k = n if k < 0 else k
            i = k
        elif c in _TEXT_COMMANDS:
            i = _text_end(script, i + 1)
        elif c in "{}":
            i += 1
        elif c in _FILE_COMMANDS or c in _LABEL_COMMANDS or c == "e":
            k = script.find("\n", i)
            if c in _LABEL_COMMANDS:
                k = min((x for x in (script.find(";", i), k) if x >= 0), default=-1)
            i = n if k < 0 else k
        elif c in _SIMPLE:
            i += 1
        else:
            found.add("?")
            i += 1
    return found, flags


def scripts(argv: tuple[Word, ...]) -> list[Word] | None:
    """The sed scripts of the command; None when one comes from a file (-f)."""
    found = parsed(argv)
    if found is None or found.has("-f"):
        return None
    given = found.values("-e")
    if given:
        return list(given)
    return list(found.operands[:1])


def in_place(argv: tuple[Word, ...]) -> bool:
    """``-i``/``--in-place``: sed writes its file operands."""
    found = parsed(argv)
    return found is None or found.error is not None or found.has("-i")


def runs_code(argv: tuple[Word, ...]) -> str | None:
    split = parsed(argv)
    if split is not None and split.has("-f"):
        # (``sed -f /dev/stdin <<< '1e rm f'``: toolrun does not read the script)
        return "sed -f runs a script toolrun does not read, and its e command runs commands"
    for word in scripts(argv) or ():
        if word.value is None:
            continue
        found, flags = commands(word.value)
        if "e" in found:
            return "the sed script's e command runs a shell command"
        if "e" in flags:
            return "sed's s///e runs the pattern space as a shell command"
    return None


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    if in_place(argv):
        return "sed -i edits files in place"
    found = scripts(argv)
    if found is None:
        return "sed -f runs a script from a file toolrun does not read"
    for word in found:
        if word.value is None or word.glob:
            return f"sed script {word.raw} is only known when the command runs"
        letters, flags = commands(word.value)
        if letters & (_FILE_COMMANDS | {"e", "?"}) or flags & {"w", "e"}:
            return "the sed script writes (w W), reads (r R) or runs (e) files or programs"
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    return () if found is None else tuple(w for w in found.values("-f") if w.value != "-")
