"""Files a command opens when a wrapper runs it: ``env cat .env``, ``exec cat .env``,
``sudo cat .env``.

Those wrappers are stripped for deny and ask rules only (an allow rule for ``cat`` does
not cover ``sudo cat``), so the file command's arguments were never checked against
Read and Edit rules: under bypassPermissions ``env cat .env`` printed a Read-denied
file. Here each wrapped form a deny rule sees is read as its file command reads it.
"""

from __future__ import annotations

import dataclasses
import posixpath

from toolrun.permissions import programs
from toolrun.permissions.analysis import SimpleCommand
from toolrun.permissions.forms import DENY_ONLY_WRAPPERS
from toolrun.permissions.memo import by_identity
from toolrun.permissions.shellpaths import PathArgument, path_arguments
from toolrun.permissions.words import Word


def _behind_wrapper(cmd: SimpleCommand) -> bool:
    name = cmd.name
    return name is not None and posixpath.basename(name) in DENY_ONLY_WRAPPERS


def _wrapped(cmd: SimpleCommand) -> tuple[tuple[Word, ...], ...]:
    if not _behind_wrapper(cmd):
        return ()  # (the usual command: no wrapper, nothing to add)
    # (the command as written is decided already; a name known only at run time is not
    # a file command toolrun knows)
    return tuple(a for a in cmd.argvs if len(a) < len(cmd.effective) and a[0].is_static)


def wrapped_arguments(cmd: SimpleCommand) -> tuple[PathArgument, ...]:
    """The path arguments of every command ``cmd`` runs behind a deny-only wrapper."""
    # (the usual command has none: answered before the memo, which then keeps only these)
    return _wrapped_arguments(cmd) if _behind_wrapper(cmd) else ()


@by_identity
def _wrapped_arguments(cmd: SimpleCommand) -> tuple[PathArgument, ...]:
    found: dict[tuple[str, str], PathArgument] = {}
    for argv in _wrapped(cmd):
        for argument in path_arguments(dataclasses.replace(cmd, effective=argv)):
            found.setdefault((argument.word.raw, argument.access), argument)
    return tuple(found.values())


def wrapped_option_files(cmd: SimpleCommand) -> tuple[tuple[Word, ...], tuple[Word, ...]]:
    """(files options make them read, files options make them write): ``env grep -f .env
    x``, ``exec sort -o ~/.profile F``."""
    return _wrapped_option_files(cmd) if _behind_wrapper(cmd) else _NONE


_NONE: tuple[tuple[Word, ...], tuple[Word, ...]] = ((), ())


@by_identity
def _wrapped_option_files(cmd: SimpleCommand) -> tuple[tuple[Word, ...], tuple[Word, ...]]:
    reads: list[Word] = []
    writes: list[Word] = []
    for argv in _wrapped(cmd):
        reads.extend(programs.option_reads(argv))
        writes.extend(programs.option_writes(argv))
    return tuple(reads), tuple(writes)
