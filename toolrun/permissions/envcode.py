"""Environment variables whose value is code, or that change which code a program runs.

``GIT_PAGER='rm f' git -p log`` runs ``rm f``; so do ``LESSOPEN='|rm f' less x``,
``GIT_CONFIG_KEY_0=core.pager``, ``LD_PRELOAD=./x.so ls`` and ``BASH_ENV=x bash s.sh``.
A command that sets one (a ``VAR=`` prefix, ``env VAR=`` / ``sudo VAR=``, or ``export``,
``declare``, a bare assignment or ``read`` for the commands after it) cannot be analysed:
no rule or mode allows it while deny/ask rules exist, exactly as ``sh -c`` is not.

Each program's module names its own variables (``CODE_ENV``; a trailing ``*`` is a
prefix) and may say which values run nothing (``harmless_env(name, value, env)``:
``GIT_PAGER=cat``). Children inherit the environment (``make`` runs git, git runs less),
so every name any program knows counts for every command. The loader and shell-wide
ones, and those of programs toolrun has no module for (man), are :data:`GENERAL`.

Sources: ld.so(8), bash(1) INVOCATION/PS4/SHELLOPTS, git(1) ENVIRONMENT VARIABLES,
git-config(1) GIT_CONFIG_COUNT, less(1) ENVIRONMENT VARIABLES, man(1), perlrun(1),
node(1), python(1).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Literal

from toolrun.permissions import programs
from toolrun.permissions.words import Word

#: The dynamic loader, bash itself, and the pager/editor/browser every other program runs.
GENERAL = frozenset(
    {"LD_*", "DYLD_*", "GCONV_PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS",
     "BASHOPTS", "BASH_FUNC_*", "BASH_LOADABLES_PATH", "PAGER", "EDITOR", "VISUAL", "SHELL",
     "BROWSER", "MANPAGER", "MANOPT", "MANROFFOPT", "SYSTEMD_PAGER", "SYSTEMD_EDITOR",
     "SUDO_EDITOR", "SUDO_ASKPASS", "TAR_OPTIONS", "GREP_OPTIONS"}
)  # fmt: skip

#: Programs that run nothing a command could name: as a pager or editor they are inert.
_PLAIN = frozenset({"", "cat", "less", "more", "true", "false", ":"})
#: less/cat display flags (no -o log file, -k key file, -t tags, +command).
_DISPLAY_FLAGS = re.compile(r"-[FRXSiIMmNnKQrEeJWwsuUacdgGLqv~]+")
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "/bin/sh", "/bin/bash", "/usr/bin/bash",
                     "/bin/dash", "/bin/zsh", "/usr/bin/zsh"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?=\+?=)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Wrappers that take ``VAR=value`` words before the program (env(1), sudo(8)).
_ENV_SETTERS = frozenset({"env", "sudo", "doas"})
#: Builtins that set a shell variable the commands after them see.
_DECLARATIONS = frozenset({"export", "declare", "typeset", "local", "readonly"})


def plain_program(value: str) -> bool:
    """``cat``, ``less -R``, ``''``: a pager or editor that runs nothing else."""
    first, *rest = value.split() or [""]
    return first.rpartition("/")[2] in _PLAIN and all(_DISPLAY_FLAGS.fullmatch(w) for w in rest)


def _general_harmless(name: str, value: str, _env: Mapping[str, str | None]) -> bool:
    if name in ("PAGER", "EDITOR", "VISUAL", "MANPAGER", "BROWSER", "SYSTEMD_PAGER",
                "SYSTEMD_EDITOR", "SUDO_EDITOR"):
        return plain_program(value)
    if name == "SHELL":
        return value in _SHELLS
    if name == "PS4":
        return not any(c in value for c in "$`")  # PS4 is expanded: $(...) runs
    return value == "" and not name.startswith("BASH_FUNC_")


_Known = tuple[frozenset[str], tuple[str, ...], object]


@functools.cache
def _known() -> tuple[_Known, ...]:
    """(names, prefixes, harmless_env) of every program module, then the general list."""
    programs.program("")  # (loads the table)
    table = programs._TABLE or {}
    seen: dict[int, object] = {id(m): m for m in table.values()}
    out: list[_Known] = []
    for module in seen.values():
        names = getattr(module, "CODE_ENV", None)
        if names:
            out.append((*_split(names), getattr(module, "harmless_env", None)))
    out.append((*_split(GENERAL), _general_harmless))
    return tuple(out)


def _split(names: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    exact = frozenset(n for n in names if not n.endswith("*"))
    return exact, tuple(n[:-1] for n in names if n.endswith("*"))


def code_reason(name: str, value: str | None, env: Mapping[str, str | None]) -> str | None:
    """Why ``name=value`` makes a program run code the command does not show (None: inert)."""
    for exact, prefixes, harmless in _known():
        if name in exact or name.startswith(prefixes):
            if value is not None and callable(harmless) and harmless(name, value, env):
                continue
            shown = "a value only known at run time" if value is None else repr(value)
            return f"{name}={shown}: a program runs it as code or loads code from it"
    return None


Setting = tuple[str, str | None]


def settings(
    kind: str, assignments: Sequence[Word], words: Sequence[Word],
    argvs: Sequence[Sequence[Word]],
) -> tuple[list[Setting], Literal["prefix", "state"]]:
    """The variables a command sets: for the program it runs (prefix, ``env VAR=``) or in
    the shell, for every later command (``export``, a bare assignment, ``read VAR``)."""
    if kind == "assignment":
        return [_setting(w) for w in assignments], "state"
    if kind == "declaration":
        if not words or words[0].text not in _DECLARATIONS or any(
            w.text in ("-n", "-p", "-f", "-F") for w in words[1:]
        ):
            return [], "state"  # (`export -n`, `declare -p`: removes or prints, sets nothing)
        out: list[Setting] = []
        for w in words[1:]:
            if w.value is None and _NAME.fullmatch(w.raw):
                out.append((w.raw, None))  # `export NAME`: exports whatever it holds
            elif w.value is None or not w.value.startswith(("-", "+")):
                out.append(_setting(w))
        return out, "state"
    found = [_setting(w) for w in assignments]
    for argv in argvs:
        if not argv:
            continue
        head = argv[0].text.rpartition("/")[2]
        if head in _ENV_SETTERS:
            for w in argv[1:]:
                if w.value is not None and _ASSIGNMENT.match(w.value):
                    found.append(_setting(w))
                elif w.value is None or not w.value.startswith("-"):
                    break
        elif head in ("read", "mapfile", "readarray", "getopts") or (
            head == "printf" and any(w.text == "-v" for w in argv[1:2])
        ):
            # `read GIT_PAGER <<< 'rm f'`: the value is whatever comes in
            return [(w.text, None) for w in argv[1:] if _NAME.fullmatch(w.text)], "state"
    return found, "prefix"


def _setting(word: Word) -> Setting:
    text = word.value if word.value is not None else word.raw
    match = _ASSIGNMENT.match(text)
    if match is None:
        return (text, None)
    name = match.group(0)
    if word.value is None or text[len(name) :].startswith("+="):
        return (name, None)  # computed, or appended to what the environment holds
    return (name, text[len(name) + 1 :])


def problem(
    kind: str, assignments: Sequence[Word], words: Sequence[Word],
    argvs: Sequence[Sequence[Word]],
) -> str | None:
    """Why this command runs code through its environment, or leaves a variable that makes
    later commands do so (refused: toolrun does not follow shell state here)."""
    if not assignments and kind == "command" and not _may_set(argvs):
        return None  # (the hot path: `git log`, `ls -la`)
    found, where = settings(kind, assignments, words, argvs)
    if not found:
        return None
    env = dict(found)
    for name, value in found:
        why = code_reason(name, value, env)
        if why is not None:
            if where == "state":
                return f"{why}; it stays set for the commands after it"
            return why
    return None


def _may_set(argvs: Sequence[Sequence[Word]]) -> bool:
    for argv in argvs:
        if argv:
            head = argv[0].text.rpartition("/")[2]
            if head in _ENV_SETTERS or head in ("read", "mapfile", "readarray", "getopts",
                                                "printf"):
                return True
    return False
