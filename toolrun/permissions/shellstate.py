"""Shell state one command changes for the words of the commands after it.

toolrun reads every word of a command line with bash's default state: default glob
options, the ``IFS``, ``HOME``, ``PATH`` and ``CDPATH`` it knows, no aliases, functions or
hashed names. A command that changes that state (``shopt -s dotglob``, ``set -f``,
``GLOBIGNORE=x``, ``HOME=/``, ``read IFS``, ``declare -n``, ``BASH_CMDS[ls]=/bin/rm``)
makes bash read the later commands differently (``shopt -s dotglob; cat *`` prints
``.env``), so the line is not analysable: refused, never guessed (fail closed).

Two kinds of change are followed instead: a variable assigned or exported on its own
(``LESSOPEN='|cmd'; less f``) reaches the later commands as if written before each of
them (``unsafe_env``: allow rules and the read-only set see it), and the variable the
cwd probe writes through (``__toolrun_cwd_file``, read by toolrun's EXIT trap after
the last command) is refused wherever it is named, last command or not.

Pure functions over the walker's simple commands, in the order bash runs them (a
substitution before its command); a change inside a subshell or a pipeline does not
reach the later commands, but is refused all the same (over-approximation, never under).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.analysis import SimpleCommand

#: Variables that change how bash reads later words or which code runs for a name: the
#: ones toolrun drops from the shell's environment (``bash_env.DROPPED``, for the same
#: reasons), plus those it must keep but reads itself (``HOME`` for ``~`` and ``cd``,
#: ``PATH`` for command names) and bash's tables of aliases and hashed commands.
STATE_VARIABLES = frozenset(
    {
        "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4", "SHELLOPTS",
        "BASHOPTS", "POSIXLY_CORRECT", "BASH_COMPAT", "CDPATH", "OLDPWD", "PWD", "IFS",
        "GLOBIGNORE", "GLOBSORT", "EXECIGNORE", "BASH_LOADABLES_PATH", "BASH_XTRACEFD", "TMOUT",
        "TIMEFORMAT", "HISTFILE", "INPUTRC", "FIGNORE", "HOME", "PATH", "BASH_ALIASES",
        "BASH_CMDS", "BASH_ARGV0",
    }
)  # fmt: skip
#: The variable toolrun's EXIT trap writes ``pwd -P`` to: whoever sets it picks the file.
PROBE_MARK = "__toolrun"
#: ``set`` options that change no word and no command name (errors, tracing, pipes).
_HARMLESS_SET_LETTERS = frozenset("euxvCnhbmTEt")
_HARMLESS_SET_NAMES = frozenset(
    {"errexit", "nounset", "xtrace", "verbose", "noclobber", "noexec", "hashall", "notify",
     "monitor", "functrace", "errtrace", "onecmd", "pipefail"}
)  # fmt: skip
#: Builtins that assign the variables their operands name (read, printf -v, ...).
_ASSIGNING_BUILTINS = frozenset({"read", "mapfile", "readarray", "getopts", "printf"})
#: Builtins that use the state variables while they run (a prefix assignment reaches them).
_STATE_BUILTINS = frozenset(
    {"cd", "pushd", "popd", "source", ".", "set", "shopt", "read", "mapfile", "readarray",
     "printf", "exec", "eval", "hash", "type", "command", "enable", "alias", "getopts"}
)  # fmt: skip
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def problems(command: str, commands: Sequence[SimpleCommand]) -> list[str]:
    """Why bash would read the later commands of ``command`` otherwise than toolrun does."""
    out: list[str] = []
    if PROBE_MARK in command:
        out.append(f"the command names {PROBE_MARK}_cwd_file, the file toolrun's "
                   "working-directory probe writes after it")
    last = len(commands) - 1
    for index, cmd in enumerate(commands):
        if index == last:
            break  # (what the last command changes, no word reads)
        why = _changes(cmd)
        if why is not None:
            out.append(f"{why}: bash reads the commands after it otherwise than toolrun")
    return out


def inherit(commands: Sequence[SimpleCommand], safe: frozenset[str]) -> list[SimpleCommand]:
    """The commands with the variables set before them (``X=1; cmd``, ``export X=1; cmd``)
    added to their ``unsafe_env``, as if each were written ``X=1 cmd``; ``safe`` names the
    variables allow rules strip."""
    out: list[SimpleCommand] = []
    carried: tuple[str, ...] = ()
    for cmd in commands:
        if carried and cmd.kind == "command":
            unsafe = (*carried, *cmd.unsafe_env)
            allow_form = cmd.allow_form
            if allow_form is not None:
                allow_form = " ".join([*unsafe, *(w.raw for w in cmd.effective)])
            cmd = dataclasses.replace(cmd, unsafe_env=unsafe, allow_form=allow_form)
        out.append(cmd)
        for word in _assigned(cmd):
            name = _variable(word)
            if name is None or name not in safe:
                carried = (*carried, word.raw)
    return out


def _assigned(cmd: SimpleCommand) -> tuple[Word, ...]:
    """The variables a bare assignment or ``export``/``declare``/... statement sets."""
    if cmd.kind == "assignment":
        return cmd.assignments
    if cmd.kind == "declaration":
        return tuple(w for w in cmd.words[1:] if not w.text.startswith(("-", "+")))
    return ()


def _variable(word: Word) -> str | None:
    """The variable a ``NAME=value`` / ``NAME[i]=v`` / ``NAME`` word names; None if computed."""
    found = _NAME.match(word.raw)
    if found is None:
        return None
    rest = word.raw[found.end() :]
    if rest and rest[0] not in "=+[":
        return None  # (`$X=1`, `"$n"=v`: the name is only known at run time)
    return found.group()


def _state_name(word: Word) -> str | None:
    """Why assigning through ``word`` changes state: it names a state variable or its name
    is only known at run time."""
    name = _variable(word)
    if name is None:
        return f"{word.raw} assigns a variable whose name is only known at run time"
    if name in STATE_VARIABLES:
        return f"{word.raw} sets {name}"
    return None


def _changes(cmd: SimpleCommand) -> str | None:
    """Why ``cmd`` changes the state later words are read with; None when it does not."""
    if cmd.kind in ("assignment", "declaration"):
        for word in _assigned(cmd):
            why = _state_name(word)
            if why is not None:
                return why
        # (`export -n` un-exports; only declare/typeset/local -n make a nameref)
        if cmd.kind == "declaration" and cmd.words[0].text != "export":
            for word in cmd.words[1:]:
                text = word.text
                if text.startswith(("-", "+")) and "n" in text[1:]:
                    return f"{cmd.words[0].raw} {text} makes a name refer to another variable"
        return None
    if cmd.kind == "unset":
        for word in cmd.words[1:]:
            name = word.value if word.value is not None else _NAME.fullmatch(word.raw)
            if name is None:
                return f"unset {word.raw} removes a variable only known at run time"
            if word.raw in STATE_VARIABLES:
                return f"unset {word.raw} changes how bash reads words"
        return None
    if cmd.kind != "command":
        return None
    name = cmd.name
    if name in _STATE_BUILTINS:
        for word in cmd.assignments:
            why = _state_name(word)
            if why is not None:
                return f"{why} for {name}"
    if name == "shopt":
        return _shopt(cmd.effective)
    if name == "set":
        return _set(cmd.effective)
    if name in _ASSIGNING_BUILTINS:
        return _assigns(name, cmd.effective)
    return None


def _shopt(argv: tuple[Word, ...]) -> str | None:
    for word in argv[1:]:
        text = word.value
        if text is None or word.glob:
            return f"shopt {word.raw} is only known when the command runs"
        if text.startswith("-") and ("s" in text or "u" in text):
            # (dotglob, nocaseglob, globstar, extglob, nullglob, failglob, expand_aliases...)
            return f"shopt {' '.join(w.raw for w in argv[1:])} changes how bash expands words"
    return None


def _set(argv: tuple[Word, ...]) -> str | None:
    words = argv[1:]
    i = 0
    while i < len(words):
        word = words[i]
        text = word.value
        if text is None or word.glob:
            return f"set {word.raw} is only known when the command runs"
        if text in ("--", "-") or not text.startswith(("-", "+")):
            return None  # (the positional parameters: words toolrun already sees as unknown)
        letters = set(text[1:])
        if not letters - {"o"} <= _HARMLESS_SET_LETTERS:
            # -f (noglob), -B (braceexpand), -k (keyword), -a (allexport), -P (physical), -H
            return f"set {text} changes how bash reads commands"
        if "o" in letters:  # `set -euo pipefail`: the option name is the next word
            option = words[i + 1].value if i + 1 < len(words) else ""  # (none: a listing)
            if option is None or words[i + 1].glob:
                return f"set {text} {words[i + 1].raw} is only known when the command runs"
            if option and option not in _HARMLESS_SET_NAMES:
                return f"set {text} {option} changes how bash reads commands"
            i += 1
        i += 1
    return None


def _assigns(name: str, argv: tuple[Word, ...]) -> str | None:
    """``read IFS``, ``printf -v PATH``, ``mapfile BASH_CMDS``, ``getopts o HOME``."""
    for word in argv[1:]:
        if word.value is None or word.glob:
            if name == "printf":
                continue  # (printf assigns only through -v, checked below)
            return f"{name} {word.raw} may assign a variable only known at run time"
        if name != "printf":
            for part in word.value.lstrip("-").split("="):
                if part.split("[", 1)[0] in STATE_VARIABLES:
                    return f"{name} {word.raw} assigns {part}"
    if name == "printf":
        words = argv[1:]
        for i, word in enumerate(words):
            text = word.value
            if text is None or word.glob:
                return f"printf {word.raw} could be -v, which assigns a variable"
            if not text.startswith("-v"):
                if text == "--" or not text.startswith("-"):
                    return None  # (the format: no -v after it)
                continue
            target = Word(text[2:], text[2:]) if len(text) > 2 else (
                words[i + 1] if i + 1 < len(words) else None)
            if target is None:
                return None
            why = _state_name(Word(target.raw + "=", None if target.value is None else ""))
            return f"printf -v: {why}" if why is not None else None
    return None
