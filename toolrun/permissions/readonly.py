"""The built-in read-only Bash set (design §4).

``ls cat echo pwd head tail grep wc which diff stat du find`` (``find`` without
``-exec``/``-delete``/``-fprint``...), ``true false test sleep``, read-only ``git``
sub-commands, and ``cd`` inside the workspace. Files they name must be inside the
workspace (or ``additionalDirectories``). They are allowed in every mode and make a
Bash call concurrency-safe. ``cd`` together with ``git`` is not read-only (a
repository's config can run programs).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolrun.permissions.bash import SimpleCommand, Word, analyse
from toolrun.permissions.paths import EXEMPT_WRITE_TARGETS, Boundary
from toolrun.permissions.shellpaths import (
    glob_directory,
    path_arguments,
    track_cwds,
    word_path,
)

READ_ONLY_COMMANDS = frozenset(
    {
        "ls", "cat", "echo", "pwd", "head", "tail", "grep", "wc", "which", "diff", "stat",
        "du", "find", "true", "false", "test", "sleep", "cd", "git", "printf", "basename",
        "dirname", "realpath", "readlink", "uname", "whoami", "nproc", ":",
    }
)  # fmt: skip
_FIND_ACTIONS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_GIT_READ_ONLY = frozenset(
    {
        "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "cat-file",
        "blame", "shortlog", "describe", "grep", "merge-base", "rev-list", "show-ref",
        "count-objects", "whatchanged", "name-rev", "for-each-ref", "check-ignore",
        "version", "branch", "tag", "remote", "config", "stash", "worktree", "reflog",
    }
)  # fmt: skip
_GIT_FORBIDDEN_PREFIXES = (
    "--output",
    "-O",
    "--open-files-in-pager",
    "--ext-diff",
    "--exec",
    "--upload-pack",
    "--receive-pack",
)
_BRANCH_FLAGS = frozenset(
    {
        "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current",
        "--no-color", "-q", "--quiet", "--no-column", "-l", "--list",
    }
)  # fmt: skip
_BRANCH_FLAG_PREFIXES = (
    "--color", "--sort=", "--merged", "--no-merged", "--contains", "--no-contains",
    "--points-at", "--format=", "--column", "--abbrev",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ReadOnly:
    """Whether one simple command is in the built-in read-only set, and why (not)."""

    read_only: bool
    reason: str


def _no(reason: str) -> ReadOnly:
    return ReadOnly(False, reason)


def _paths_inside(
    words: Sequence[Word], cwd: str | None, home: str, boundary: Boundary
) -> ReadOnly | None:
    for word in words:
        path = glob_directory(word, cwd, home) if word.glob else word_path(word, cwd, home)
        if path is None:
            return _no(f"{word.raw!r} is not a path toolrun can resolve before it runs")
        if not boundary.contains(path):
            return _no(f"{path.link} is outside the workspace")
    return None


def _git(argv: tuple[Word, ...], cwd: str | None, home: str, boundary: Boundary) -> ReadOnly:
    i = 1
    while i < len(argv) and argv[i].text.startswith("-"):
        opt = argv[i].text
        if opt in ("--no-pager", "-P", "--no-optional-locks"):
            i += 1
        elif opt == "-C" and i + 1 < len(argv):
            outside = _paths_inside([argv[i + 1]], cwd, home, boundary)
            if outside is not None:
                return outside
            i += 2
        else:
            return _no(f"git option {opt} is not read-only")
    if i >= len(argv):
        return _no("git without a sub-command")
    sub = argv[i].text
    args = [w.text for w in argv[i + 1 :]]
    if sub not in _GIT_READ_ONLY:
        return _no(f"git {sub} is not a read-only git command")
    for arg in args:
        if arg.startswith(_GIT_FORBIDDEN_PREFIXES):
            return _no(f"git {sub} {arg} can write files or run programs")
    ok = {
        "branch": lambda: all(
            a in _BRANCH_FLAGS or a.startswith(_BRANCH_FLAG_PREFIXES) for a in args
        )
        or (any(a in ("-l", "--list") for a in args)),
        "tag": lambda: not args or any(a in ("-l", "--list") for a in args),
        "remote": lambda: not args
        or args in (["-v"], ["--verbose"])
        or (args[:1] == ["get-url"]),
        "config": lambda: bool(
            {"--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list"} & set(args)
        )
        and not {"--add", "--unset", "--unset-all", "--replace-all", "--edit", "-e", "set",
                 "unset", "--rename-section", "--remove-section"} & set(args),
        "stash": lambda: args[:1] in (["list"], ["show"]),
        "worktree": lambda: args[:1] == ["list"],
        "reflog": lambda: not args or args[0] == "show",
    }.get(sub)
    if ok is not None and not ok():
        return _no(f"git {' '.join([sub, *args])} can change the repository")
    return ReadOnly(True, f"git {sub} is a read-only git command")


def check_command(
    command: SimpleCommand,
    cwd: str | None,
    home: str,
    boundary: Boundary,
    *,
    with_cd: bool = False,
    redirects_checked: bool = False,
) -> ReadOnly:
    """Whether ``command`` (one simple command of a Bash call) is in the read-only set.

    ``redirects_checked``: the caller checks write redirections on their own (as file
    writes), so they do not count against the command here.
    """
    if not command.analysable:
        return _no("it is inside a construct toolrun does not analyse")
    if command.kind == "test":
        return ReadOnly(True, "test is read-only")
    if command.kind != "command":
        return _no(f"a {command.kind} is not in the read-only set")
    if command.unsafe_env:
        return _no(f"it sets {', '.join(command.unsafe_env)}")
    for redirect in () if redirects_checked else command.redirects:
        if redirect.writes:
            target = redirect.target
            if target is None or target.value not in EXEMPT_WRITE_TARGETS:
                return _no("it redirects output to a file")
    argv = command.effective
    name = command.name
    if name is None:
        return _no("the command name is computed at run time")
    if name not in READ_ONLY_COMMANDS:
        return _no(f"{name} is not in the read-only set")
    if name == "cd":
        args = [w for w in argv[1:] if w.text not in ("-L", "-P", "--")]
        if len(args) != 1 or args[0].text == "-":
            return _no("cd without exactly one directory leaves the workspace or is ambiguous")
        outside = _paths_inside(args, cwd, home, boundary)
        return outside or ReadOnly(True, "cd inside the workspace")
    if name == "git":
        if with_cd:
            return _no("git after cd in the same command can run a repository's programs")
        return _git(argv, cwd, home, boundary)
    if name == "find":
        for word in argv[1:]:
            if word.text in _FIND_ACTIONS:
                return _no(f"find {word.text} runs commands or changes files")
    paths = [arg.word for arg in path_arguments(command)]
    outside = _paths_inside(paths, cwd, home, boundary)
    if outside is not None:
        return outside
    return ReadOnly(True, f"{name} is in the read-only set")


def check_all(
    commands: Sequence[SimpleCommand], cwd: str, home: str, boundary: Boundary
) -> tuple[ReadOnly, ...]:
    """Read-only verdicts for every command of a call, following ``cd`` through it."""
    cwds = track_cwds(commands, cwd, home)
    with_cd = any(c.name in ("cd", "pushd", "popd") for c in commands)
    return tuple(
        check_command(c, d, home, boundary, with_cd=with_cd)
        for c, d in zip(commands, cwds, strict=True)
    )


@functools.lru_cache(maxsize=4096)
def _is_read_only(command: str, cwd: str, roots: tuple[str, ...], home: str) -> bool:
    analysis = analyse(command)
    if not analysis.analysable or not analysis.commands:
        return False
    boundary = Boundary.of(roots)
    return all(v.read_only for v in check_all(analysis.commands, cwd, home, boundary))


def is_read_only_command(command: str, cwd: Path, workspace: Path) -> bool:
    """True when every part of ``command`` is in the built-in read-only set (cached)."""
    home = os.path.expanduser("~")
    return _is_read_only(command, str(cwd), (str(workspace),), home)


def is_read_only_in(
    command: str, cwd: Path, roots: Sequence[Path]
) -> bool:
    """Like :func:`is_read_only_command` with ``additionalDirectories`` inside the boundary."""
    home = os.path.expanduser("~")
    return _is_read_only(command, str(cwd), tuple(str(r) for r in roots), home)
