"""What toolrun knows about individual programs: one small module per family.

Each module names the programs it covers (``NAMES``) and may define:

- ``check(argv, ctx) -> str | None``: why this use of the program is *not* read-only
  (writes a file, runs a program, reads configuration that runs code); None when its
  options are all known to be harmless. Only consulted for programs in the read-only set.
- ``runs_code(argv) -> str | None``: why the arguments themselves are code the program
  runs (``awk 'BEGIN{system(...)}'``, ``sed 'e ...'``, ``trap '...'``, ``python -c``). Such
  a command cannot be analysed: no rule may allow it, and deny rules cannot see inside.
- ``reads_program(argv, stdin) -> str | None``: why the program runs text the command
  feeds it: a script named ``-``, ``/dev/stdin``, ``/dev/fd/N``, ``<(...)``, or none at all
  while ``stdin`` (the command's standard input is a pipe, a here-string, a here-doc or a
  redirection) holds it (``perl <<< 'unlink "f"'``, ``cat x | node``, ``make -f -``). Such a
  command cannot be analysed, exactly as ``bash <<< CMD`` and ``python -c`` cannot.
- ``option_reads(argv) -> tuple[Word, ...]``: files named by options that are read
  (``grep -f FILE``), checked like file arguments.
- ``recursive(argv) -> bool``: the program reads whole directory trees.
- ``file_writes(argv, ctx) -> tuple[Word, ...] | None``: files the program writes
  because an option or a form says so (``git log --output=F``, ``git config K V``);
  None when toolrun cannot tell. Checked as writes in every mode.
- ``content_reads(argv, ctx, guarded) -> tuple[str, ...] | None``: paths whose content
  the program prints without opening them (git's history); ``guarded`` keeps those a
  Read deny or ask rule covers. None when toolrun cannot tell.
- ``option_writes(argv) -> tuple[Word, ...]``: files options (or operands) make it write
  (``sort -o F``, ``curl -o F``, ``find -fprint F``, ``uniq IN OUT``): write targets checked
  as redirections are, in every mode. A word with no value stands for a file only known at
  run time (the command is then not analysable).
- ``SPEC`` (one :class:`~toolrun.permissions.options.Spec` for every name) or ``SPECS``
  (by name): every option the program accepts. For a program in the read-only set an
  option the table does not list makes the command not read-only, and its operands (the
  file arguments) come from the same parse (``grep -e. .env`` reads ``.env``).
- ``PATTERN_OPTIONS``: option keys that give the pattern or script, so the first operand
  is a file (``grep -e P FILE``).

``argv`` is the command after wrappers are stripped; ``argv[0]`` is the program name.
A new bypass of one program is a one-file fix here.
"""

from __future__ import annotations

import functools
import importlib
import posixpath
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from toolrun.permissions.memo import by_identity
from toolrun.permissions.options import Parsed, Spec, parse
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.paths import Boundary

_MODULES = (
    "awk", "base64", "builtins", "coreutils", "curl", "diff", "find", "git", "grep",
    "interpreters", "less", "rg", "sed", "sort", "tree", "uniq", "xargs",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Context:
    """Where a command runs: its working directory (None when unknown), $HOME, the boundary."""

    cwd: str | None
    home: str
    boundary: Boundary


def _load() -> dict[str, ModuleType]:
    table: dict[str, ModuleType] = {}
    for name in _MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        for program in module.NAMES:
            table[program] = module
    return table


_TABLE: dict[str, ModuleType] | None = None


def program(name: str | None) -> ModuleType | None:
    """The module that knows ``name`` (a program name or path), if any."""
    global _TABLE
    if name is None:
        return None
    if _TABLE is None:
        _TABLE = _load()
    return _TABLE.get(posixpath.basename(name) if "/" in name else name)


#: (program name, hook) -> the hook's function (None: the program has none), as looked up
#: in its module: modules do not change, and a missing attribute is slow to look up.
_HOOKS: dict[tuple[str | None, str], Any] = {}
_UNSEEN = object()
MAX_HOOKS = 4096


def _hook(name: str | None, attribute: str) -> Any:
    """The attribute ``attribute`` of the module that knows ``name`` (None: none)."""
    key = (name, attribute)
    found = _HOOKS.get(key, _UNSEEN)
    if found is _UNSEEN:
        module = program(name)
        found = getattr(module, attribute, None) if module is not None else None
        if len(_HOOKS) < MAX_HOOKS:
            _HOOKS[key] = found
    return found


def _base(name: str) -> str:
    return posixpath.basename(name) if "/" in name else name


def spec_of(name: str | None) -> Spec | None:
    """Every option ``name`` accepts, when toolrun has its table."""
    if name is None:
        return None
    found: Spec | None = _hook(name, "SPEC")
    if found is None:
        specs = _hook(name, "SPECS")
        found = specs.get(_base(name)) if specs is not None else None
    return found


@by_identity
def parsed(argv: tuple[Word, ...]) -> Parsed | None:
    """``argv`` split as its program splits it (None: toolrun has no table for it)."""
    found = spec_of(argv[0].value if argv else None)
    return parse(found, argv[1:]) if found is not None else None


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    name = argv[0].value if argv else None
    if program(name) is None:
        return None
    split = parsed(argv)
    if split is not None and split.error is not None:
        # An option toolrun's table does not list: unknown is not read-only.
        return f"{argv[0].value}: {split.error} (not in toolrun's table of its options)"
    written = option_writes(argv)
    if written:
        return f"{argv[0].value} writes {written[0].raw}"
    fn = _hook(name, "check")
    return fn(argv, ctx) if fn is not None else None


@by_identity
def option_writes(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    """The files the command writes through its options or operands (not redirections)."""
    fn = _hook(argv[0].value if argv else None, "option_writes")
    if fn is None:
        return ()
    written = tuple(fn(argv))
    split = parsed(argv)
    if split is not None and split.error is not None:
        # An option toolrun does not know may be one that writes: fail closed.
        written += (unknown_file(f"(what {split.error} may write)"),)
    return written


def unknown_file(label: str) -> Word:
    """A file the command opens that is only known when it runs (checked as unanalysable)."""
    return Word(label, None)


def unknown_files(lists: tuple[Word, ...]) -> tuple[Word, ...]:
    """The files named inside each list file (``--files0-from=F``): unknown here."""
    return tuple(unknown_file(f"(the files named in {w.raw})") for w in lists)


def runs_code(argv: tuple[Word, ...]) -> str | None:
    fn = _hook(argv[0].value if argv else None, "runs_code")
    return fn(argv) if fn is not None else None


def reads_program(argv: tuple[Word, ...], stdin: bool) -> str | None:
    fn = _hook(argv[0].value if argv else None, "reads_program")
    return fn(argv, stdin) if fn is not None else None


@by_identity
def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    fn = _hook(argv[0].value if argv else None, "option_reads")
    return tuple(fn(argv)) if fn is not None else ()


def has(name: str | None, attribute: str) -> bool:
    """Whether the module that knows program ``name`` defines ``attribute`` (cheap)."""
    if name is None:
        return False
    return (posixpath.basename(name) if "/" in name else name) in _names_with(attribute)


def file_writes(argv: tuple[Word, ...], ctx: Context) -> tuple[Word, ...] | None:
    fn = _hook(argv[0].value if argv else None, "file_writes")
    return fn(argv, ctx) if fn is not None else ()


def content_reads(
    argv: tuple[Word, ...], ctx: Context, guarded: Callable[[tuple[str, ...]], tuple[str, ...]]
) -> tuple[str, ...] | None:
    fn = _hook(argv[0].value if argv else None, "content_reads")
    return fn(argv, ctx, guarded) if fn is not None else ()


def recursive(argv: tuple[Word, ...]) -> bool:
    name = argv[0].value if argv else None
    if name is None:
        return False
    if (posixpath.basename(name) if "/" in name else name) not in _names_with("recursive"):
        return False
    fn = _hook(name, "recursive")
    return bool(fn(argv)) if fn is not None else False


@functools.cache
def _names_with(attribute: str) -> frozenset[str]:
    """The program names whose module defines ``attribute`` (a quick pre-check)."""
    if _TABLE is None:
        program("")
    assert _TABLE is not None
    return frozenset(n for n, m in _TABLE.items() if getattr(m, attribute, None))


# ---------------------------------------------------------------------- option helpers


def options(argv: Iterable[Word]) -> Iterator[str]:
    """The option words of a GNU-style command (options may follow operands; ``--`` ends them).

    A word that is not a fixed string is yielded as ``"\\x00"``: it might become any option.
    """
    for word in list(argv)[1:]:
        text = word.value if word.value is not None and not word.glob else "\x00"
        if text == "--":
            return
        if text == "\x00" or (text.startswith("-") and text != "-") or text.startswith("+"):
            yield text


def long_is(text: str, name: str, *, abbreviations: bool = True) -> bool:
    """``--name``, ``--name=value`` or (getopt_long and git) an unambiguous-looking prefix."""
    option = text.split("=", 1)[0]
    if option == name:
        return True
    return abbreviations and option.startswith("--") and len(option) > 3 and name.startswith(option)


def short_has(text: str, letters: str) -> bool:
    """Whether a short-option cluster (``-uo``) holds one of ``letters`` (over-approximates)."""
    if not text.startswith("-") or text.startswith("--") or len(text) < 2:
        return False
    return any(c in text[1:] for c in letters)


def option_values(
    argv: tuple[Word, ...], short: str, longs: tuple[str, ...], *, abbreviations: bool = True
) -> list[Word]:
    """The words given to an option that takes a value (``-f F``, ``-fF``, ``--file=F``;
    getopt_long's abbreviations such as ``--expr=`` too, unless the program has none)."""
    out: list[Word] = []
    words = argv[1:]
    i = 0
    while i < len(words):
        word = words[i]
        text = word.value
        if text is None:
            i += 1
            continue
        if text == "--":
            break
        if short and text.startswith("-") and not text.startswith("--") and len(text) >= 2:
            cluster = text[1:]
            for k, c in enumerate(cluster):
                if c in short:
                    rest = cluster[k + 1 :]
                    if rest:
                        out.append(_sub(word, len(text) - len(rest)))
                    elif i + 1 < len(words):
                        out.append(words[i + 1])
                        i += 1
                    break
        elif text.startswith("--"):
            for name in longs:
                if long_is(text, name, abbreviations=abbreviations):
                    if "=" in text:
                        out.append(_sub(word, text.index("=") + 1))
                    elif i + 1 < len(words):
                        out.append(words[i + 1])
                        i += 1
                    break
        i += 1
    return out


def _sub(word: Word, start: int) -> Word:
    """The tail of a static word from ``start`` (the value of ``-fFILE``/``--file=FILE``)."""
    value = (word.value or "")[start:]
    # A tilde is only expanded at the start of a word, or after = in assignments.
    return Word(value, value, word.glob, False)


def options_matter(name: str | None) -> bool:
    """Whether some option of ``name`` writes, runs a program or reads a named file."""
    if name is not None and "/" in name:
        name = posixpath.basename(name)
    return name in _names_with("DANGEROUS_OPTIONS")


def options_only_read(name: str | None) -> bool:
    """Whether the options of ``name`` that matter can only read files (``grep -f F``)."""
    module = program(name)
    return getattr(module, "DANGEROUS_OPTIONS", None) == "reads"


def value_options(name: str | None) -> frozenset[str]:
    """Options of ``name`` whose next word is their value, not an option."""
    found: frozenset[str] = getattr(program(name), "VALUE_OPTIONS", frozenset())
    table = spec_of(name)
    if table is not None:
        found = found | _spec_values(table)
    return found


@functools.cache
def _spec_values(table: Spec) -> frozenset[str]:
    shorts = {f"-{c}" for c, o in table.short.items() if o.arity == "required"}
    longs = {f"--{n}" for n, o in table.long.items() if o.arity == "required"}
    return frozenset(shorts | longs)
