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

from toolrun.dataclass_init import fast_init
from toolrun.permissions import programs
from toolrun.permissions.analysis import SimpleCommand
from toolrun.permissions.bash import analyse
from toolrun.permissions.observe import Observation, note, start, stop, unchanged
from toolrun.permissions.paths import EXEMPT_WRITE_TARGETS, Boundary, ResolvedPath, resolve
from toolrun.permissions.shellpaths import (
    PathArgument,
    cd_destinations,
    path_arguments,
    track_places,
)
from toolrun.permissions.tilde import TildeError, expand_tilde
from toolrun.permissions.wordpaths import expand_glob, glob_matches, word_path
from toolrun.permissions.words import Word

READ_ONLY_COMMANDS = frozenset(
    {
        "ls", "cat", "echo", "pwd", "head", "tail", "grep", "wc", "which", "diff", "stat",
        "du", "find", "true", "false", "test", "[", "sleep", "cd", "git", "printf", "basename",
        "dirname", "realpath", "readlink", "uname", "whoami", "nproc", ":", "sort", "uniq",
        "base64", "tree", "rg", "sed", "less", "cut", "nl", "tac", "awk",
    }
)  # fmt: skip
#: Programs whose options cannot write, run or read anything: a word only known at run
#: time may become one of them without harm.
_HARMLESS_OPTIONS = frozenset({"echo", "true", "false", ":"})
#: Programs that stop reading options at their first operand (no GNU permutation).
_OPTIONS_BEFORE_OPERANDS = frozenset({"printf"})
#: First characters that can never start an option.
_NOT_OPTION_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./")


@fast_init
@dataclass(frozen=True, slots=True)
class ReadOnly:
    """Whether one simple command is in the built-in read-only set, and why (not)."""

    read_only: bool
    reason: str


def _no(reason: str) -> ReadOnly:
    return ReadOnly(False, reason)


def _word_paths(word: Word, cwd: str | None, home: str) -> tuple[ResolvedPath, ...] | None:
    if word.glob:
        return glob_matches(word, cwd, home)
    path = word_path(word, cwd, home)
    return (path,) if path is not None else None


def _unresolved(word: Word, cwd: str | None, home: str) -> str:
    """Why ``word`` has no path before the command runs (tilde forms say which and why)."""
    if word.tilde and word.value is not None:
        try:
            expand_tilde(word.value, home=home, cwd=cwd)
        except TildeError as exc:
            return f"{word.raw!r}: {exc}"
    return f"{word.raw!r} is not a path toolrun can resolve before it runs"


def _paths_inside(
    words: Sequence[Word], cwd: str | None, home: str, boundary: Boundary
) -> ReadOnly | None:
    for word in words:
        paths = _word_paths(word, cwd, home)
        if paths is None:
            return _no(_unresolved(word, cwd, home))
        for path in paths:
            if not boundary.contains(path):
                return _no(f"{path.link} is outside the workspace")
    return None


def _all_literal(argv: tuple[Word, ...]) -> bool:
    """Every word is a fixed string (the usual case: nothing for option_words to do)."""
    for w in argv:  # (a loop: cheaper than a generator for the few words of a command)
        if w.value is None or w.glob:
            return False
    return True


# (not remembered: cheaper to work out than to look up, and worked out once per
# command and directory: bash_verdicts remembers it)
def files_settled(commands: Sequence[SimpleCommand]) -> bool:
    """No part of the call can create a file before another part's glob is expanded
    (``touch ./-delete; find . *``): every part is in the read-only set, nothing redirects."""
    for command in commands:
        if command.kind == "test":
            continue
        if command.kind != "command" or command.name not in READ_ONLY_COMMANDS:
            return False
        if any(r.writes for r in command.redirects):
            return False
    return True


def option_words(
    argv: Sequence[Word],
    cwd: str | None,
    home: str,
    values: frozenset[str] = frozenset(),
    *,
    expand_globs: bool = True,
) -> tuple[ReadOnly | None, list[str]]:
    """Words bash expands before the program sees them must not become options.

    ``find . -{delete,print}`` runs ``find . -delete -print``; ``find . -del*`` becomes
    ``-delete`` when a file named ``-delete`` exists. A glob is kept when every match
    (or the word itself, when nothing matches) starts with a letter, digit, ``.`` or
    ``/``: then it cannot be an option. Returns (refusal, notes on kept globs).
    """
    notes: list[str] = []
    if _all_literal(tuple(argv)):
        return None, notes
    first_operand_ends = bool(argv) and argv[0].value in _OPTIONS_BEFORE_OPERANDS
    skip = False
    for word in argv[1:]:
        if skip:  # the value of `-m MSG`, `-name PATTERN`: never read as an option
            skip = False
            continue
        if word.value == "--" and not word.glob:
            break
        if word.value in values and not word.glob:
            skip = True
            continue
        if word.value is None:
            return _no(f"bash expands {word.raw!r} (variable, substitution or braces) "
                       "and the result could be an option"), notes
        if not word.glob:
            if first_operand_ends and not word.value.startswith("-"):
                break  # printf's format: every later word is an argument
            continue
        if word.value[:1] in _NOT_OPTION_START or word.tilde:
            continue
        if word.value[:1] not in "*?[" or not expand_globs:
            return _no(f"the glob {word.raw!r} could become an option"
                       + ("" if expand_globs else " (another part of the command can create "
                          "files before it is expanded)")), notes
        matches = expand_glob(word, cwd, home)
        if matches is None:
            return _no(f"the glob {word.raw!r} cannot be expanded before it runs "
                       "and could become an option"), notes
        bad = [m for m in matches if m[:1] not in _NOT_OPTION_START]
        if bad:
            return _no(f"the glob {word.raw!r} matches {bad[0]!r}, which the program "
                       "could read as an option"), notes
        notes.append(f"every match of {word.raw} starts with a letter, digit, . or /, "
                     "so it cannot become an option")
    return None, notes


def check_command(
    command: SimpleCommand,
    cwd: str | None,
    home: str,
    boundary: Boundary,
    *,
    with_cd: bool = False,
    redirects_checked: bool = False,
    expand_globs: bool = True,
    file_args: Sequence[PathArgument] | None = None,
    option_files: Sequence[Word] | None = None,
    physical: bool | None = None,
) -> ReadOnly:
    """Whether ``command`` (one simple command of a Bash call) is in the read-only set.

    ``redirects_checked``: the caller checks write redirections on their own (as file
    writes), so they do not count against the command here. ``file_args`` and
    ``option_files``: the command's file arguments, when the caller has them.
    ``physical``: whether ``cd`` is physical here (``set -P``; None: not known, so both
    ways a ``cd`` can go are checked).
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
        # Where bash goes (logically and physically, when set -P is not known): inside.
        found = cd_destinations(command, cwd, home, physical)
        if found is None:
            return _no(_unresolved(args[0], cwd, home))
        for directory in found:
            if not boundary.contains(resolve(directory, "/", home)):
                return _no(f"cd leads to {directory}, outside the workspace")
        return ReadOnly(True, "cd inside the workspace")
    if len(argv) < len(command.words) and any(
        w.value == "xargs" for w in command.words[: len(command.words) - len(argv)]
    ):
        return _no("xargs adds arguments read from standard input")
    if name == "git" and with_cd:
        return _no("git after cd in the same command can run a repository's programs")
    # The program's own verdict first: it is cheaper, and says what the option does.
    why = programs.check(argv, programs.Context(cwd, home, boundary))
    if why is not None:
        return _no(why)
    notes: list[str] = []
    if name not in _HARMLESS_OPTIONS and not _all_literal(argv):
        refused, notes = option_words(argv, cwd, home, programs.value_options(name),
                                      expand_globs=expand_globs)
        if refused is not None:
            return refused
    # (the resolver passes what it already worked out)
    named = path_arguments(command) if file_args is None else file_args
    extra = programs.option_reads(argv) if option_files is None else option_files
    outside = _paths_inside([*(a.word for a in named), *extra], cwd, home, boundary)
    if outside is not None:
        return outside
    reason = "; ".join([f"{name} is in the read-only set", *notes])
    return ReadOnly(True, reason)


_MOVES = frozenset({"cd", "pushd", "popd"})


class BashVerdicts:
    """The analysis of one Bash command in one directory and the read-only check of each
    part: what the decision is made on (:attr:`Decision.bash`), and what the step that
    groups calls into runs and the marks of a check read from the decision.

    ``verdicts``: one per simple command, with write redirections left to the caller (the
    decision checks them as file writes). ``read_only``: the whole call is in the set,
    its redirections included (what makes a call concurrency-safe).
    """

    __slots__ = ("analysable", "command", "commands", "cwd", "cwds", "home", "problems",
                 "read_only", "roots", "settled", "verdicts", "with_cd")

    def __init__(self, command: str, cwd: str, home: str, boundary: Boundary) -> None:
        analysis = analyse(command)
        commands = analysis.commands
        # what they were worked out for: whoever is handed them (the partition, the
        # marks of a check) sees whether they answer its own question
        self.command = command
        self.cwd = cwd
        self.home = home
        self.roots = boundary.roots
        self.analysable = analysis.analysable
        self.problems = analysis.problems
        self.commands = commands
        places = track_places(commands, cwd, home)
        self.cwds = tuple(p.pwd for p in places)
        self.with_cd = with_cd = any(c.name in _MOVES for c in commands)
        self.settled = settled = files_settled(commands)
        # (one loop, not a generator per question: this runs for every new command)
        verdicts: list[ReadOnly] = []
        read_only = bool(self.analysable and commands)
        for c, p in zip(commands, places, strict=True):
            v = _part_verdict(c, p.pwd, home, boundary, with_cd, settled, p.physical)
            verdicts.append(v)
            if read_only and not (v.read_only and (c.kind == "test" or not _writes_file(c))):
                read_only = False
        self.verdicts = tuple(verdicts)
        self.read_only = read_only

    def answers(self, command: str, cwd: str, home: str, roots: tuple[str, ...]) -> bool:
        """Whether these are the verdicts of ``command`` in ``cwd`` (with that home and
        workspace boundary): the same inputs, so what working them out again would give."""
        return (command == self.command and cwd == self.cwd and home == self.home
                and roots == self.roots)  # fmt: skip


#: The verdict of one part (a SimpleCommand a plain part's reading shares: ``git log -n 5``
#: of many compound commands) in one place, with what it read; by the part's identity.
_PartKey = tuple[int, str | None, str, tuple[str, ...], bool, bool, bool | None]
_part_verdicts: dict[_PartKey, tuple[SimpleCommand, tuple[Observation, ...], ReadOnly]] = {}


def _part_verdict(
    command: SimpleCommand,
    cwd: str | None,
    home: str,
    boundary: Boundary,
    with_cd: bool,
    settled: bool,
    physical: bool | None,
) -> ReadOnly:
    """``check_command`` of one part of a Bash call (write redirections left to the
    caller), remembered as :func:`bash_verdicts` remembers a whole call's: by every
    input, and only while what it read reads the same."""
    key = (id(command), cwd, home, boundary.roots, with_cd, settled, physical)
    hit = _part_verdicts.get(key)
    if hit is not None and hit[0] is command and unchanged(hit[1]):
        note(hit[1])
        return hit[2]
    recording, outer = start()
    try:
        value = check_command(command, cwd, home, boundary, with_cd=with_cd,
                              redirects_checked=True, expand_globs=settled, physical=physical)
    finally:
        stop(outer)
    log = tuple(recording.log)
    note(log, opaque=recording.opaque)
    if not recording.opaque:
        if len(_part_verdicts) >= VERDICT_CACHE:
            _part_verdicts.clear()
        _part_verdicts[key] = (command, log, value)
    return value


def _writes_file(command: SimpleCommand) -> bool:
    """A redirection that writes a file (what ``check_command`` refuses unless told the
    caller checks it)."""
    if not command.redirects:
        return False  # (most parts)
    return any(
        r.writes and (r.target is None or r.target.value not in EXEMPT_WRITE_TARGETS)
        for r in command.redirects
    )


#: How many (command, directory) verdicts are remembered, with what each read.
VERDICT_CACHE = 4096
_verdicts: dict[tuple[str, str, str, tuple[str, ...]], tuple[tuple[Observation, ...], BashVerdicts]] = {}


def bash_verdicts(command: str, cwd: str, home: str, boundary: Boundary) -> BashVerdicts:
    """The read-only verdicts of ``command`` run in ``cwd``, remembered by every input they
    are computed from; what they read from the system (symlinks, glob matches, git
    repositories) is read again and must come out the same, or they are worked out afresh.
    Those reads are noted in the decision being recorded, as if made now."""
    key = (command, cwd, home, boundary.roots)
    hit = _verdicts.get(key)
    if hit is not None and unchanged(hit[0]):
        note(hit[0])
        return hit[1]
    recording, outer = start()
    try:
        value = BashVerdicts(command, cwd, home, boundary)
    finally:
        stop(outer)
    log = tuple(recording.log)
    note(log, opaque=recording.opaque)
    if not recording.opaque:
        if len(_verdicts) >= VERDICT_CACHE:
            _verdicts.clear()
        _verdicts[key] = (log, value)
    return value


@functools.lru_cache(maxsize=64)
def _boundary(roots: tuple[str, ...]) -> Boundary:
    # Resolved once per process, as an engine resolves its own boundary once (resolving
    # the workspace again for every command was a tenth of a new command's check).
    return Boundary.of(roots)


def _is_read_only(command: str, cwd: str, roots: tuple[str, ...], home: str) -> bool:
    return bash_verdicts(command, cwd, home, _boundary(roots)).read_only


def _home() -> str:
    """``os.path.expanduser("~")``, read from $HOME directly when it is set (as that does)."""
    home = os.environ.get("HOME")
    return (home.rstrip("/") or "/") if home is not None else os.path.expanduser("~")


def is_read_only_command(command: str, cwd: Path, workspace: Path) -> bool:
    """True when every part of ``command`` is in the built-in read-only set (cached)."""
    return _is_read_only(command, str(cwd), (str(workspace),), _home())


def is_read_only_in(
    command: str, cwd: Path, roots: Sequence[Path]
) -> bool:
    """Like :func:`is_read_only_command` with ``additionalDirectories`` inside the boundary."""
    return _is_read_only(command, str(cwd), tuple(str(r) for r in roots), _home())


def read_only_answer(
    analysis: BashVerdicts | None, command: str, cwd: Path, workspace: Path
) -> bool | None:
    """What :func:`is_read_only_command` says of ``command``, read from ``analysis`` (a
    decision's, :attr:`Decision.bash`) when it was made for the same question: the same
    command, directory, home and boundary (no ``additionalDirectories``); None when not."""
    if analysis is None:
        return None
    roots = _boundary((str(workspace),)).roots
    if not analysis.answers(command, str(cwd), _home(), roots):
        return None
    return analysis.read_only
