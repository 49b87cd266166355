"""git: read-only sub-commands, options that write or run programs, other repositories.

Read-only only when: no global option other than the harmless ones (``-c``,
``--config-env``, ``--exec-path``, ``--git-dir``, ``-p``/``--paginate`` ... run code or
change the repository git uses), a read-only sub-command without a mutating form,
no option that writes a file (``--output``) or runs a program (``--textconv``,
``--ext-diff``, ``--filters``, ``-O``), and git runs on the workspace's own repository
(a nested repository's config — ``core.fsmonitor``, ``core.pager`` — runs programs).

:func:`strip_globals` gives deny and ask rules the command without global options.
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

from toolrun.permissions.observe import observe
from toolrun.permissions.paths import realpath
from toolrun.permissions.programs import long_is
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"git"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
#: Options whose next word is their value (that word is never read as an option).
VALUE_OPTIONS = frozenset(
    {"-m", "--message", "-F", "--file", "--author", "--date", "-C", "-c", "--format",
     "--pretty", "--grep", "-S", "-G", "-e", "--since", "--until", "--after", "--before", "-n",
     "--max-count", "--committer", "-L"}
)  # fmt: skip

#: Global options that take the next word as their value.
GLOBAL_WITH_VALUE = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env",
     "--exec-path", "--list-cmds", "--attr-source"}
)  # fmt: skip
GLOBAL_FLAGS = frozenset(
    {"-p", "--paginate", "-P", "--no-pager", "--bare", "--no-replace-objects",
     "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
     "--no-optional-locks", "--no-lazy-fetch", "--no-advice", "--html-path", "--man-path",
     "--info-path", "--version", "--help"}
)  # fmt: skip
#: Global options that change nothing git runs or writes.
_HARMLESS_GLOBALS = frozenset({"-P", "--no-pager", "--no-optional-locks", "--no-advice"})

READ_ONLY = frozenset(
    {
        "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "cat-file",
        "blame", "shortlog", "describe", "grep", "merge-base", "rev-list", "show-ref",
        "count-objects", "whatchanged", "name-rev", "for-each-ref", "check-ignore",
        "version", "branch", "tag", "remote", "config", "stash", "worktree", "reflog",
        "diff-tree", "diff-files", "diff-index",
    }
)  # fmt: skip
#: Sub-command options that write files or run programs (long forms; git accepts prefixes).
_FORBIDDEN_LONG = (
    "--output", "--output-directory", "--open-files-in-pager", "--ext-diff", "--textconv",
    "--filters", "--exec", "--upload-pack", "--receive-pack", "--edit",
)  # fmt: skip
_BRANCH_FLAGS = frozenset(
    {"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current",
     "--no-color", "-q", "--quiet", "--no-column", "-l", "--list", "--color"}
)  # fmt: skip
_BRANCH_VALUE_PREFIXES = (
    "--color=", "--sort=", "--merged", "--no-merged", "--contains", "--no-contains",
    "--points-at", "--format=", "--column", "--abbrev",
)  # fmt: skip
_CONFIG_READS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "get", "list",
     "--show-origin", "--show-scope", "--name-only", "--null", "-z", "--global", "--system",
     "--local", "--worktree", "--includes", "--no-includes", "--type", "--bool", "--int",
     "--path", "--default"}
)  # fmt: skip


def strip_globals(argv: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """``git -C x --no-pager push`` -> ``git push`` (None when there is nothing to strip)."""
    i = 1
    while i < len(argv):
        text = argv[i].text
        if text in GLOBAL_WITH_VALUE:
            i += 2
        elif text.split("=", 1)[0] in GLOBAL_WITH_VALUE or text in GLOBAL_FLAGS:
            i += 1
        elif text.startswith("-C") and len(text) > 2 or text.startswith("-c") and len(text) > 2:
            i += 1  # -Cdir / -ckey=value
        else:
            break
    if i == 1 or i >= len(argv):
        return None
    return (argv[0], *argv[i:])


def repository(directory: str) -> str | None:
    """The repository git would use from ``directory``: the nearest ancestor with ``.git``
    of where it leads (git walks up from ``getcwd()``, the physical directory)."""
    return observe(_repository, directory)


def _repository(directory: str) -> str | None:
    current = realpath(directory)
    while True:
        if os.path.lexists(posixpath.join(current, ".git")):
            return current
        parent = posixpath.dirname(current)
        if parent == current:
            return None
        current = parent


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    directory = ctx.cwd
    i = 1
    while i < len(argv) and argv[i].text.startswith("-"):
        opt = argv[i].text
        if opt in _HARMLESS_GLOBALS:
            i += 1
        elif opt == "-C" and i + 1 < len(argv):
            from toolrun.permissions.shellpaths import word_path  # (shellpaths imports bash)

            path = word_path(argv[i + 1], directory, ctx.home)
            if path is None:
                return f"git -C {argv[i + 1].raw}: toolrun cannot tell which directory that is"
            if not ctx.boundary.contains(path):
                return f"git -C {path.link}: outside the workspace"
            directory = path.link
            i += 2
        else:
            return f"git option {opt} can run programs or change what git reads"
    if i >= len(argv):
        return "git without a sub-command"
    own = _other_repository(directory, ctx)
    if own is not None:
        return own
    sub = argv[i].text
    args = [w.text for w in argv[i + 1 :]]
    if sub not in READ_ONLY:
        return f"git {sub} is not a read-only git command"
    for arg in args:
        if arg.startswith("--") and any(long_is(arg, name) for name in _FORBIDDEN_LONG):
            return f"git {sub} {arg} can write files, run programs or read outside the repository"
        if sub == "grep" and arg.startswith("-O"):
            return f"git {sub} {arg} opens files in a pager program"
    return _sub_command(sub, args)


#: Sub-commands that are read-only only in some of their forms.
_MIXED = frozenset({"branch", "tag", "remote", "config", "stash", "worktree", "reflog"})


def _sub_command(sub: str, args: list[str]) -> str | None:
    if sub not in _MIXED:
        return None
    changes = f"git {' '.join([sub, *args])} can change the repository"
    if sub == "branch":
        listing = any(a in ("-l", "--list") for a in args)
        flags_only = all(a in _BRANCH_FLAGS or a.startswith(_BRANCH_VALUE_PREFIXES) for a in args)
        mutating = {"-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy",
                    "-u", "--set-upstream-to", "--unset-upstream", "--edit-description",
                    "-f", "--force", "-t", "--track", "--create-reflog"}  # fmt: skip
        if any(a in mutating or a.startswith("--set-upstream-to") for a in args):
            return changes
        return None if flags_only or listing else changes
    if sub == "tag":
        mutating = {"-d", "--delete", "-a", "-s", "-u", "-f", "--force", "-m", "-F", "-e"}
        if any(a in mutating for a in args):
            return changes
        return None if not args or any(a in ("-l", "--list") for a in args) else changes
    if sub == "remote":
        return (
            None
            if not args or args in (["-v"], ["--verbose"]) or args[:1] == ["get-url"]
            else changes
        )
    if sub == "config":
        writes = {"--add", "--unset", "--unset-all", "--replace-all", "--edit", "-e", "set",
                  "unset", "--rename-section", "--remove-section", "rename-section",
                  "remove-section", "edit", "--file", "-f", "--blob"}  # fmt: skip
        if any(a.split("=", 1)[0] in writes for a in args):
            return changes
        if not any(a.split("=", 1)[0] in _CONFIG_READS for a in args):
            return changes  # `git config key value` sets
        positional = [a for a in args if not a.startswith("-")]
        if args[:1] in (["get"], ["list"]):
            positional = positional[1:]
        return changes if len(positional) > 2 else None
    if sub == "stash":
        return None if args[:1] in (["list"], ["show"]) else changes
    if sub == "worktree":
        return None if args[:1] == ["list"] else changes
    if sub == "reflog":
        return None if not args or args[0] == "show" or args[0].startswith("-") else changes
    return None


def _other_repository(directory: str | None, ctx: Context) -> str | None:
    if directory is None:
        return "git runs in a directory toolrun cannot determine"
    workspace = ctx.boundary.roots[0] if ctx.boundary.roots else None
    if workspace is not None and directory == workspace:
        return None  # the workspace's own repository, whatever it is
    here = repository(directory)
    home = repository(workspace) if workspace is not None else None
    if here != home:
        where = here or directory
        return (
            f"git runs on the repository at {where}, not the workspace's own "
            "(its configuration can run programs)"
        )
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    """``git diff --no-index A B`` and ``git blame --contents F`` read files anywhere."""
    words = list(argv[1:])
    out: list[Word] = []
    texts = [w.text for w in words]
    if "--no-index" in texts:
        out.extend(w for w in words if not w.text.startswith("-") and w.text not in READ_ONLY)
    for k, text in enumerate(texts):
        if text == "--contents" and k + 1 < len(words):
            out.append(words[k + 1])
        elif text.startswith("--contents="):
            value = text.split("=", 1)[1]
            out.append(Word(value, value))
    return tuple(out)
