"""Bash words as paths: the working directory through a command, file arguments, targets.

Pure helpers shared by the read-only check and the resolver. A word whose
value is only known at run time (``$VAR``, ``$(...)``, a glob, a relative path
after a ``cd`` we could not follow) has no path: callers treat that as
"cannot be checked", never as "fine".
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from toolrun.dataclass_init import fast_init
from toolrun.permissions import programs
from toolrun.permissions.analysis import SimpleCommand
from toolrun.permissions.memo import by_identity
from toolrun.permissions.observe import observe
from toolrun.permissions.paths import (
    normalise,
    physical,
    realpath,
    unsettled,
)
from toolrun.permissions.programs import sed
from toolrun.permissions.wordpaths import word_text
from toolrun.permissions.words import Word

Access = Literal["read", "write"]

READ_FILE_COMMANDS = frozenset(
    {
        "cat", "head", "tail", "less", "more", "wc", "stat", "ls", "du", "diff", "file",
        "strings", "od", "xxd", "hexdump", "base64", "md5sum", "sha1sum", "sha256sum",
        "nl", "tac", "sort", "uniq", "cut", "realpath", "readlink", "find", "grep",
        "egrep", "fgrep", "rg", "sed", "awk", "source", ".", "tree", "zgrep",
        "gawk", "mawk", "nawk", "base32", "basenc", "rev", "paste", "fold", "fmt", "pr",
        "expand", "unexpand", "cmp", "comm", "join", "cksum", "sum", "b2sum", "sha224sum",
        "sha384sum", "sha512sum", "shasum", "zcat", "bzcat", "xzcat", "zless", "zmore",
        "column", "jq", "yq", "iconv", "look", "bat", "batcat", "view", "vim", "vi", "nano",
        "emacs", "split", "csplit", "tar", "zip", "gzip", "bzip2", "xz", "scp", "rsync",
        "openssl", "gpg", "xmllint", "sqlite3",
    }
)  # fmt: skip
WRITE_FILE_COMMANDS = frozenset(
    {
        "rm", "rmdir", "mv", "cp", "touch", "mkdir", "tee", "truncate", "ln", "chmod",
        "chown", "chgrp", "install", "shred", "unlink", "dd",
    }
)  # fmt: skip
#: Commands whose last path argument is written and the others only read.
_COPY_LIKE = frozenset({"cp", "ln", "install"})
#: Commands whose first positional argument is not a path (a pattern, a mode, an owner).
_FIRST_NOT_PATH = frozenset(
    {"grep", "egrep", "fgrep", "rg", "sed", "awk", "chmod", "chown", "chgrp", "jq", "yq",
     "look", "gawk", "mawk", "nawk", "zgrep"}
)
_PATTERN_OPTIONS = frozenset({"-e", "--regexp", "-f", "--file", "--expression"})
#: Options that take the next word as their value (so it is not a path), for the programs
#: without a full option table (those with one are split by ``programs.parsed``).
_OPTION_VALUES: dict[str, frozenset[str]] = {
    "mkdir": frozenset({"-m", "--mode"}),
    "install": frozenset({"-m", "-o", "-g", "--mode", "--owner", "--group"}),
    "touch": frozenset({"-d", "-t", "--date"}),
    "truncate": frozenset({"-s", "--size"}),
    "xxd": frozenset({"-c", "-l", "-s", "-g"}),
    "od": frozenset({"-A", "-j", "-N", "-t", "-w"}),
}  # fmt: skip


@fast_init
@dataclass(frozen=True, slots=True)
class Place:
    """Where one command of a call starts: bash's ``$PWD`` (None when it cannot be known)
    and whether ``cd`` is physical there (``set -P``; None when that cannot be known)."""

    pwd: str | None
    physical: bool | None


def track_cwds(
    commands: Sequence[SimpleCommand], cwd: str | None, home: str
) -> tuple[str | None, ...]:
    """The working directory each command starts in, as bash's ``$PWD`` (None when it
    cannot be known): :func:`track_places` without the ``physical`` option."""
    return tuple(place.pwd for place in track_places(commands, cwd, home))


def track_places(
    commands: Sequence[SimpleCommand], cwd: str | None, home: str
) -> tuple[Place, ...]:
    """Where each command starts (:class:`Place`).

    The kernel's directory is where ``$PWD`` leads (bash keeps that so), so a relative
    path is resolved from ``$PWD`` with its ``..`` applied physically (:func:`word_path`).
    A ``cd`` at the top level moves ``$PWD`` for the commands after it, logically by
    default and physically after ``cd -P``, ``set -P`` or ``set -o physical``
    (:func:`cd_destinations`); a ``cd`` we cannot follow (dynamic, inside a pipeline or a
    subshell, ``cd -``, ``popd``, a sourced script, a command named at run time) makes
    every later directory unknown.
    """
    if not any(c.name in _MOVES or (c.name is None and c.kind == "command")
               for c in commands):
        # (the usual call: nothing moves the shell, so every command starts where it does)
        place = Place(cwd, False)
        return (place,) * len(commands)
    out: list[Place] = []
    current = cwd
    physical: bool | None = False
    cdpath = False  # CDPATH may be set: `cd name` then searches its folders first
    for command in commands:
        out.append(Place(current, physical))
        name = command.name
        cdpath = cdpath or "CDPATH" in command.text or any(
            "CDPATH" in w.raw for w in command.assignments)
        if name in ("set", "shopt"):
            physical = _physical_option(command, physical)
        elif name in ("cd", "pushd"):
            if not command.top_level or (cdpath and _searches_cdpath(command)):
                current = None
                continue
            found = cd_destinations(command, current, home, physical)
            current = found[0] if found is not None and len(found) == 1 else None
        elif name in _MOVES_UNSEEN or (name is None and command.kind == "command"):
            current = None
    return tuple(out)


def _searches_cdpath(command: SimpleCommand) -> bool:
    """bash looks a ``cd`` operand up in ``$CDPATH`` unless it starts with ``/``, ``.``
    or ``..`` (toolrun's shell starts without CDPATH; the command may set it)."""
    operands = [w for w in command.effective[1:] if not w.text.startswith("-")]
    return any(not w.text.startswith(("/", ".")) for w in operands)


#: Commands that may move the shell in a way the command text does not show.
_MOVES_UNSEEN = frozenset({"popd", "chdir", "source", ".", "eval", "exec"})
#: Every command that can change where later commands start, or how cd goes there.
_MOVES = _MOVES_UNSEEN | {"cd", "pushd", "set", "shopt"}


def _physical_option(command: SimpleCommand, physical: bool | None) -> bool | None:
    """bash's ``physical`` option after ``set ...`` or ``shopt ...`` (None: not known)."""
    words = command.effective[1:]
    if any(w.value is None or w.glob for w in words) or not command.top_level:
        # (a dynamic word, or a subshell's own option: we cannot tell what it leaves)
        return None if _names_physical(command) else physical
    texts = [w.text for w in words]
    if command.name == "shopt":
        flags = "".join(t[1:] for t in texts if t.startswith("-"))
        if "o" not in flags or "physical" not in texts:
            return physical
        if "s" in flags:
            return True
        return False if "u" in flags else physical
    expects_name, sign = False, True
    for text in texts:
        if expects_name:
            expects_name = False
            if text == "physical":
                physical = sign
            continue
        if text in ("-", "--") or text[:1] not in ("-", "+") or len(text) < 2:
            break  # positional parameters from here on
        sign = text[0] == "-"
        for flag in text[1:]:
            if flag == "P":
                physical = sign
            elif flag == "o":
                expects_name = True
    return physical


def _names_physical(command: SimpleCommand) -> bool:
    return any(w.value is None or "P" in w.text or "physical" in w.text
               for w in command.effective[1:])


def cd_destinations(
    command: SimpleCommand, cwd: str | None, home: str, physical: bool | None = None
) -> tuple[str, ...] | None:
    """Where a ``cd DIR`` or ``pushd DIR`` leaves ``$PWD``: one directory when the mode
    is known (``-L``/``-P`` or ``physical``), else the logical and the physical outcome
    (one when they agree). None when it cannot be told.

    Logical (bash's default): ``$PWD/DIR`` folded on the string, ``..`` removing the
    name before it, as long as each name before a ``..`` and the result are directories;
    else bash falls back to the kernel's walk and ``$PWD`` becomes where it went.
    Physical: the kernel's walk, every symlink resolved.
    """
    mode = physical
    operand: Word | None = None
    options_done = False
    for word in command.effective[1:]:
        if word.value is None or word.glob:
            return None
        text = word.value
        if not options_done and text.startswith("-") and text != "-":
            if text == "--":
                options_done = True
                continue
            if command.name != "cd" or any(c not in "LPe" for c in text[1:]):
                return None  # pushd -n, cd -@: not a plain move
            for flag in text[1:]:
                if flag in "LP":
                    mode = flag == "P"
            continue
        if operand is not None:
            return None  # too many arguments: bash refuses
        operand = word
        options_done = True
    if operand is None:
        if command.name == "pushd":
            return None  # swaps the top two directories of the stack
        target: str | None = home
    elif operand.value == "-" or (command.name == "pushd" and operand.text[:1] in "+-"):
        return None  # $OLDPWD, the directory stack
    else:
        target = word_text(operand, cwd, home)
    if target is None:
        return None
    found = {_cd_physical(target) if m else _cd_logical(target)
             for m in ((False, True) if mode is None else (mode,))}
    if None in found:
        return None
    return tuple(sorted(d for d in found if d is not None))


def _cd_logical(joined: str) -> str | None:
    if ".." not in joined:
        return normalise(joined)  # (no disk: nothing before a `..` to look at)
    return observe(_canonical, joined)


def _canonical(joined: str) -> str | None:
    """bash's ``sh_canonpath`` with ``PATH_CHECKDOTDOT|PATH_CHECKEXISTS``, then its
    fallback to the kernel's walk when that fails."""
    parts: list[str] = []
    failed = False
    for part in joined.split("/"):
        if part in ("", "."):
            continue
        if part != "..":
            parts.append(part)
        elif parts:
            if not os.path.isdir("/" + "/".join(parts)):
                failed = True
                break
            parts.pop()
    canon = "/" + "/".join(parts)
    if not failed and os.path.isdir(canon):
        return canon
    if os.path.isdir(joined):
        return realpath(physical(joined))  # bash: chdir worked, $PWD is getcwd()
    # Not there now: an earlier part may make it (`mkdir -p b && cd b/../c`); only when
    # the string and the kernel would agree on it can toolrun say where it will be.
    if failed or unsettled(joined) is not None or physical(joined) != canon:
        return None
    return canon


def _cd_physical(joined: str) -> str | None:
    link = physical(joined)
    if unsettled(joined) is not None:
        return None
    return realpath(link)



@fast_init
@dataclass(frozen=True, slots=True)
class PathArgument:
    """A word a program takes as a file, and whether it reads or writes it."""

    word: Word
    access: Access


@by_identity
def path_arguments(command: SimpleCommand) -> tuple[PathArgument, ...]:
    """The words of a known file command that name files, with how they are used."""
    argv = command.effective
    name = command.name
    if name is None or (name not in READ_FILE_COMMANDS and name not in WRITE_FILE_COMMANDS):
        return ()
    if name == "dd":
        return tuple(
            PathArgument(
                # bash expands a tilde after = in name=value words: of=~/x is $HOME/x
                Word(w.raw[3:], w.value[3:], w.glob, w.raw[3:4] == "~"),
                "write" if w.value[:3] == "of=" else "read",
            )
            for w in argv[1:]
            if w.value is not None and w.value[:3] in ("if=", "of=")
        )
    write = name in WRITE_FILE_COMMANDS or (name == "sed" and _sed_in_place(argv))
    from_table = _operands(argv)
    if from_table is not None:
        access: Access = "write" if write else "read"
        return tuple(PathArgument(w, access) for w in from_table)
    takes_value = _OPTION_VALUES.get(name, frozenset())
    positional: list[Word] = []
    options_done = False
    skip_next = False
    pattern_given = False
    find_expression = False
    for word in argv[1:]:
        text = word.text
        if skip_next:
            skip_next = False
            continue
        if name == "find" and (
            find_expression or (text.startswith(("-", "(", "!")) and text != "-")
        ):
            find_expression = True
            continue
        if not options_done and text.startswith("-") and text != "-":
            if text == "--":
                options_done = True
            elif text in takes_value:
                skip_next = True
                pattern_given = pattern_given or text in _PATTERN_OPTIONS
            else:
                pattern_given = pattern_given or text.split("=", 1)[0] in _PATTERN_OPTIONS
            continue
        positional.append(word)
    if name in _FIRST_NOT_PATH and positional and not (pattern_given and name != "chmod"):
        positional = positional[1:]
    if name in ("source", "."):
        positional = positional[:1]
    if not write:
        return tuple(PathArgument(w, "read") for w in positional)
    if name in _COPY_LIKE | {"mv"}:
        # `cp -t DIR SRC...`: the directory written is an option's value.
        directory = _target_directory(argv)
        if directory is not None:
            sources: Access = "write" if name == "mv" else "read"
            return tuple(PathArgument(w, sources) for w in positional if w is not directory) + (
                PathArgument(directory, "write"),
            )
    if name == "ln" and len(positional) >= 2 and _symbolic(argv):
        targets = tuple(PathArgument(w, "read") for w in _link_targets(positional))
        return targets + (PathArgument(positional[-1], "write"),)
    if name in _COPY_LIKE and len(positional) >= 2:
        return tuple(PathArgument(w, "read") for w in positional[:-1]) + (
            PathArgument(positional[-1], "write"),
        )
    return tuple(PathArgument(w, "write") for w in positional)


def _operands(argv: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """The file operands of a program with an option table, split as the program splits
    them (``grep -e. .env`` reads ``.env``); None when toolrun has no table for it.

    When the program would refuse an option, every word that is not an option may still
    be a file to another version of it: all are returned (fail closed).
    """
    found = programs.parsed(argv)
    if found is None:
        return None
    operands = found.operands
    module = programs.program(argv[0].value)
    patterns: frozenset[str] = getattr(module, "PATTERN_OPTIONS", frozenset())
    first_not_path = argv[0].value in _FIRST_NOT_PATH or (
        argv[0].value is not None and posixpath.basename(argv[0].value) in _FIRST_NOT_PATH)
    if found.error is not None:
        return operands
    if first_not_path and not (patterns and found.has(*patterns)):
        operands = operands[1:]
    return operands


def _sed_in_place(argv: tuple[Word, ...]) -> bool:
    if programs.parsed(argv) is not None:
        return sed.in_place(argv)
    for word in argv[1:]:
        value = word.value
        if value is None:
            continue
        if value.startswith("--in-place") or (
            value.startswith("-") and not value.startswith("--") and "i" in value[1:]
        ):
            return True
    return False


def _symbolic(argv: tuple[Word, ...]) -> bool:
    for word in argv[1:]:
        value = word.value or ""
        if value == "--":
            return False
        if value == "--symbolic" or (value.startswith("-") and not value.startswith("--")
                                     and "s" in value[1:]):
            return True
    return False


def _link_targets(positional: Sequence[Word]) -> list[Word]:
    """``ln -s TARGET LINK``: a relative TARGET is resolved against LINK's directory.

    LINK may be an existing directory (the link is made inside it) or a new name: both
    readings are returned, so both are checked. An absolute target stays as it is.
    """
    link = positional[-1]
    out: list[Word] = []
    for target in positional[:-1]:
        value = target.value
        if value is None or link.value is None or value.startswith("/") or target.tilde:
            out.append(target)
            continue
        directories = {posixpath.dirname(link.value.rstrip("/")) or ".", link.value}
        if len(positional) > 2 or link.value.endswith("/"):
            directories = {link.value}
        for directory in sorted(directories):
            joined = posixpath.join(directory, value)
            out.append(Word(joined, joined, target.glob, link.tilde))
    return out


def _target_directory(argv: tuple[Word, ...]) -> Word | None:
    """The value of ``-t DIR`` / ``-rtDIR`` / ``--target-directory=DIR`` (cp, mv, ln, install)."""
    found = programs.option_values(argv, "t", ("--target-directory",))
    return found[0] if found else None
