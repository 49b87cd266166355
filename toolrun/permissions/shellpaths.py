"""Bash words as paths: the working directory through a command, file arguments, targets.

Pure helpers shared by the read-only check and the resolver. A word whose
value is only known at run time (``$VAR``, ``$(...)``, a glob, a relative path
after a ``cd`` we could not follow) has no path: callers treat that as
"cannot be checked", never as "fine".
"""

from __future__ import annotations

import glob
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from toolrun.permissions.bash import SimpleCommand
from toolrun.permissions.frozen import fast_init
from toolrun.permissions.memo import by_identity
from toolrun.permissions.observe import observe
from toolrun.permissions.paths import ResolvedPath, resolve
from toolrun.permissions.tilde import TildeError, expand_tilde
from toolrun.permissions.words import Word

Access = Literal["read", "write"]
#: A glob that matches more files than this is not checked file by file.
MAX_GLOB_MATCHES = 2000

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


def track_cwds(
    commands: Sequence[SimpleCommand], cwd: str | None, home: str
) -> tuple[str | None, ...]:
    """The working directory each command starts in (None when it cannot be known).

    A ``cd`` at the top level of the command moves the directory for the commands
    after it; a ``cd`` we cannot follow (dynamic target, inside a pipeline or a
    subshell, ``cd -``, ``popd``) makes every later directory unknown.
    """
    out: list[str | None] = []
    current = cwd
    for command in commands:
        out.append(current)
        name = command.name
        if name in ("cd", "pushd", "popd", "chdir"):
            if not command.top_level or name == "popd":
                current = None
                continue
            args = [w for w in command.effective[1:] if w.text not in ("-L", "-P", "--")]
            if not args:
                current = home
            elif len(args) == 1 and args[0].is_static and args[0].text != "-":
                path = word_path(args[0], current, home)
                current = path.link if path is not None else None
            else:
                current = None
    return tuple(out)


def word_path(word: Word, cwd: str | None, home: str) -> ResolvedPath | None:
    """The path a static shell word names; None when it depends on run time.

    An unquoted tilde prefix is expanded as bash expands it (``~``, ``~user``, ``~+``;
    ``~-`` and the directory stack are refused: not known before the command runs).
    """
    if not word.is_static or word.value is None or not word.value:
        return None
    value = word.value
    if word.tilde:
        try:
            value = expand_tilde(value, home=home, cwd=cwd)
        except TildeError:
            return None
    if value.startswith("~"):
        value = "./" + value  # a quoted ~ (or ~nosuchuser) is a file named ~...
    if value.startswith("/"):
        return resolve(value, "/", home)
    if cwd is None:
        return None
    return resolve(value, cwd, home)


def expand_glob(word: Word, cwd: str | None, home: str) -> list[str] | None:
    """The file names an unquoted glob word matches right now (bash's default options).

    Empty when nothing matches (bash then keeps the word as it is); None when it cannot
    be known (dynamic parts, unknown directory, POSIX classes, too many matches).
    """
    if word.value is None:
        return None
    pattern = word.value
    if word.tilde:
        try:
            pattern = expand_tilde(pattern, home=home, cwd=cwd)
        except TildeError:
            return None
    if "[:" in pattern or "[=" in pattern or "[." in pattern:
        return None  # POSIX classes: Python's glob would match less than bash
    pattern = pattern.replace("[^", "[!")  # bash's [^...] is Python's [!...]
    prefix = ""
    if not pattern.startswith("/"):
        if cwd is None:
            return None
        prefix = cwd.rstrip("/") + "/"
    return observe(_glob, prefix, pattern)


def _glob(prefix: str, pattern: str) -> list[str] | None:
    found: list[str] = []
    for i, match in enumerate(glob.iglob(glob.escape(prefix) + pattern)):
        if i >= MAX_GLOB_MATCHES:
            return None
        found.append(match[len(prefix) :])
    return sorted(found)


def glob_matches(word: Word, cwd: str | None, home: str) -> tuple[ResolvedPath, ...] | None:
    """The paths a glob word names: its matches, or the word itself when nothing matches."""
    found = expand_glob(word, cwd, home)
    if found is None:
        return None
    if not found:
        path = word_path(Word(word.raw, word.value, False, word.tilde), cwd, home)
        return (path,) if path is not None else None
    base = cwd or "/"
    return tuple(resolve(m, base, home) for m in found)


def glob_directory(word: Word, cwd: str | None, home: str) -> ResolvedPath | None:
    """For a glob word (``dir/*.py``), the directory it expands in; None when dynamic."""
    if word.value is None:
        return None
    value = word.value
    head, _, _ = value.partition("*")
    head = head.split("?")[0].split("[")[0]
    directory = posixpath.dirname(head) if "/" in head else "."
    if directory == "":
        directory = "/"
    return word_path(Word(directory, directory, False, word.tilde), cwd, home)


@fast_init
@dataclass(frozen=True, slots=True)
class PathArgument:
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
    from toolrun.permissions import programs

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
    from toolrun.permissions.programs import parsed

    if parsed(argv) is not None:
        from toolrun.permissions.programs.sed import in_place

        return in_place(argv)
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
    from toolrun.permissions.programs import option_values

    found = option_values(argv, "t", ("--target-directory",))
    return found[0] if found else None
