"""Critical file operations of a Bash command: an ``rm`` or ``find -delete`` of the
workspace, a parent of it, ``~`` or ``/``, and file commands acceptEdits may run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolrun.permissions.analysis import SimpleCommand
from toolrun.permissions.call_steps import CallSteps
from toolrun.permissions.paths import critical_reason, unsettled, variants
from toolrun.permissions.wordpaths import glob_directory, glob_matches, word_path, word_text
from toolrun.permissions.words import Word

#: find(1) tests that narrow what -delete removes (with a pattern other than ``*``).
_FIND_NARROWING = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
     "-lname", "-ilname", "-empty", "-newer", "-anewer", "-cnewer", "-mtime", "-atime",
     "-ctime", "-mmin", "-amin", "-cmin", "-size", "-samefile", "-inum", "-links", "-perm",
     "-user", "-group", "-uid", "-gid", "-nouser", "-nogroup", "-used"}
)  # fmt: skip
#: Operators under which a narrowing test no longer guards the -delete.
_FIND_OPERATORS = frozenset({"-o", "-or", ",", "!", "-not"})
_FIND_START_OPTIONS = frozenset({"-H", "-L", "-P"})


def _emptying_finds(cmd: SimpleCommand) -> tuple[tuple[Word, ...], ...]:
    """The ``find`` argvs of ``cmd`` that delete (``-delete``, ``-exec rm``) everything
    under their roots: no narrowing test, or one an operator can step around."""
    out: list[tuple[Word, ...]] = []
    for argv in cmd.argvs:
        if not argv or argv[0].text.rpartition("/")[2] != "find":
            continue
        texts = [w.text for w in argv[1:]]
        deletes = "-delete" in texts or any(
            t in ("-exec", "-execdir", "-ok", "-okdir")
            and k + 1 < len(texts) and texts[k + 1].rpartition("/")[2] in _RM
            for k, t in enumerate(texts)
        )
        if not deletes:
            continue
        narrowed = any(
            t in _FIND_NARROWING and k + 1 < len(texts) and texts[k + 1] != "*"
            for k, t in enumerate(texts)
        ) or texts[-1:] == ["-empty"]
        if narrowed and not any(t in _FIND_OPERATORS for t in texts):
            continue
        out.append(argv)
    return tuple(out)


def _find_roots(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    """find's starting points: the words before its expression (after -H/-L/-P/-D/-O)."""
    roots: list[Word] = []
    i = 1
    while i < len(argv) and (argv[i].text in _FIND_START_OPTIONS
                             or argv[i].text.startswith("-O")):
        i += 1
    if i < len(argv) and argv[i].text == "-D":
        i += 2
    for word in argv[i:]:
        if word.text.startswith(("-", "(", "!", ",")) or word.text in (")",):
            break
        roots.append(word)
    return tuple(roots)


def _rm_argvs(cmd: SimpleCommand) -> tuple[tuple[Word, ...], ...]:
    """Every way ``cmd`` may be an ``rm``: the command itself, behind a wrapper, in -exec.

    (Not remembered: a look-up by identity cost more than this; the last part of the
    name is its ``posixpath.basename``.)"""
    return tuple(
        argv
        for argv in (*cmd.argvs, *cmd.nested_argvs)
        if argv and argv[0].text.rpartition("/")[2] in _RM
    )


#: File commands acceptEdits lets change the workspace.
ACCEPT_EDITS_COMMANDS = frozenset({"mkdir", "touch", "mv", "cp", "rm", "rmdir"})
_RM = frozenset({"rm", "rmdir"})


class CriticalOps(CallSteps):
    """The critical-operation checks of a Bash call."""

    def _critical(self, cmd: SimpleCommand, cwd: str | None) -> str | None:
        """Why this command removes a critical path (``/``, ~, the workspace or a parent)."""
        argvs = _rm_argvs(cmd)
        finds = _emptying_finds(cmd)
        if not argvs and not finds:
            return None
        home = self.engine.home
        anchors = [*self.engine.anchors, *(variants(cwd) if cwd else ())]
        for argv in finds:
            why = self._find_critical(argv, cwd, anchors)
            if why is not None:
                return why
        for argv in argvs:
            options_done = False
            for word in argv[1:]:
                text = word.text
                if not options_done and text.startswith("-") and text != "-":
                    options_done = text == "--"
                    continue
                if word.value is None:
                    return f"rm of {word.raw}, which is only known when the command runs"
                if word.glob:
                    directory = glob_directory(word, cwd, home)
                    last = word.value.rstrip("/").rsplit("/", 1)[-1]
                    if directory is None:
                        return f"rm of {word.raw} in a directory toolrun cannot determine"
                    if any(c in last for c in "*?["):
                        why = critical_reason(directory, home=home, anchors=anchors)
                        if why is not None:
                            return f"rm of {word.raw} empties {directory.link}: {why}"
                    # `rm -rf src/*/../ws`: a match is src/link/../ws, which may be anything.
                    matches = glob_matches(word, cwd, home)
                    if matches is None:
                        if ".." in word.value.split("/"):
                            return f"rm of {word.raw}, whose matches toolrun cannot list"
                        continue
                    for match in matches:
                        why = critical_reason(match, home=home, anchors=anchors)
                        if why is not None:
                            return f"rm of {word.raw} matches {match.link}: {why} (critical path)"
                    continue
                path = word_path(word, cwd, home)
                if path is None:
                    if word.tilde:  # ~- is $OLDPWD, ~N the directory stack: unknown here
                        return f"rm of {word.raw}, which is only known when the command runs"
                    # `(cd .. && rm -rf proj)`: relative to a directory toolrun could not
                    # follow, any name may be the workspace or a parent.
                    return f"rm of {text} in a directory toolrun cannot determine"
                why = critical_reason(path, home=home, anchors=anchors)
                if why is not None:
                    return f"rm of {path.link}: {why} (critical path)"
                missing = unsettled(word_text(word, cwd, home) or "")
                if missing is not None:
                    # `ln -s /T x && rm -rf x/../ws`: the `..` leaves whatever x becomes.
                    return (f"rm of {text}: its '..' follows {missing}, which does not exist "
                            "yet, so toolrun cannot tell where it leads")
        return None

    def _find_critical(
        self, argv: tuple[Word, ...], cwd: str | None, anchors: Sequence[str]
    ) -> str | None:
        """``find ROOT -delete`` (or ``-exec rm``) with no test that narrows it empties
        ROOT: a critical ROOT (``/``, ~, the workspace or a parent) is as ``rm -rf``."""
        home = self.engine.home
        roots = _find_roots(argv) or (Word(".", "."),)
        for word in roots:
            if word.value is None:
                return f"find {word.raw} -delete, a directory only known when the command runs"
            path = (glob_directory(word, cwd, home) if word.glob
                    else word_path(word, cwd, home))
            if path is None:
                return f"find {word.raw} -delete in a directory toolrun cannot determine"
            why = critical_reason(path, home=home, anchors=anchors)
            if why is not None:
                return f"find {word.raw} deletes everything under {path.link}: {why} " \
                       "(critical path)"
        return None

    def _file_op_inside(
        self, cmd: SimpleCommand, args: Sequence[Any], cwd: str | None
    ) -> bool:
        """acceptEdits: mkdir/touch/mv/cp/rm/rmdir whose files are all inside the workspace."""
        if cmd.name not in ACCEPT_EDITS_COMMANDS or not cmd.analysable or cmd.unsafe_env:
            return False
        if not args:
            return False
        home = self.engine.home
        for arg in args:
            word = arg.word
            paths = self._word_paths(word, cwd)
            if word.glob:  # its folder too: what `*` may match by the time it runs
                directory = glob_directory(word, cwd, home)
                paths = None if paths is None or directory is None else (*paths, directory)
            if paths is None or not all(self.engine.boundary.contains(p) for p in paths):
                return False
        for redirect in cmd.redirects:
            if redirect.writes:
                return False
        return True
