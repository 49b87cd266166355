"""git: read-only sub-commands, options that write or run programs, other repositories.

Read-only only when: no global option other than the harmless ones (``-c``,
``--config-env``, ``--exec-path``, ``--git-dir``, ``-p``/``--paginate`` ... run code or
change the repository git uses), a read-only sub-command without a mutating form,
no option that writes a file (``--output``) or runs a program (``--textconv``,
``--ext-diff``, ``--filters``, ``-O``), and git runs on the workspace's own repository
(a nested repository's config — ``core.fsmonitor``, ``core.pager`` — runs programs).

:func:`strip_globals` gives deny and ask rules the command without global options.
Beyond read-only: :func:`runs_code` (configuration values and options git runs as
programs), :func:`file_writes` (``--output``, ``format-patch -o``, ``git config`` sets)
and :func:`content_reads` (file content printed out of history, :mod:`.history`).

Kept in one module: the sub-command tables and the walk over git's global options
make one decision; history.py holds the content readers (what history can print).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

from toolrun.permissions.memo import by_identity
from toolrun.permissions.observe import observe
from toolrun.permissions.paths import frozen_reads, realpath
from toolrun.permissions.programs import long_is, option_values
from toolrun.permissions.programs.git import config as git_config
from toolrun.permissions.programs.git import history
from toolrun.permissions.wordpaths import word_path
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

#: Environment git runs as a program or reads configuration (and so programs) from:
#: git(1) ENVIRONMENT VARIABLES, git-config(1) ENVIRONMENT (envcode reads this).
CODE_ENV = frozenset(
    {"GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_SSH",
     "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "GIT_CONFIG_COUNT",
     "GIT_CONFIG_KEY_*", "GIT_CONFIG_VALUE_*", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG",
     "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR",
     "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
     "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_TRACE*", "GIT_ATTR_SOURCE", "GIT_NAMESPACE",
     "GIT_REPLACE_REF_BASE", "HOME", "XDG_CONFIG_HOME"}
)  # fmt: skip
#: GIT_TRACE* values that print to stderr or nothing (any other value is a file it writes).
_TRACE_TO_STDERR = frozenset({"", "0", "1", "2", "true", "false"})


def harmless_env(name: str, value: str, env: Mapping[str, str | None]) -> bool:
    """``GIT_PAGER=cat``, ``GIT_TRACE=1``, ``GIT_CONFIG_KEY_0=user.name``: runs nothing."""
    from toolrun.permissions.envcode import plain_program

    if name in ("GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR"):
        return plain_program(value)
    if name.startswith("GIT_TRACE"):
        return value.lower() in _TRACE_TO_STDERR
    if name.startswith("GIT_CONFIG_KEY_"):
        return not git_config.code_key(value)
    if name.startswith("GIT_CONFIG_VALUE_"):
        key = env.get("GIT_CONFIG_KEY_" + name.removeprefix("GIT_CONFIG_VALUE_"))
        return key is not None and not git_config.code_key(key)
    if name == "GIT_CONFIG_COUNT":
        # it switches on GIT_CONFIG_KEY_0.. : only those this same command shows
        if not value.isdigit() or int(value) > 16:
            return False
        keys = [env.get(f"GIT_CONFIG_KEY_{i}") for i in range(int(value))]
        return all(k is not None and not git_config.code_key(k) for k in keys)
    return False


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
#: Listing options of git branch / git tag: (option, takes the next word) and whether
#: it makes the command list (git-branch(1), git-tag(1): --contains ... "implies --list").
_BRANCH_VALUES = {"--sort": False, "--format": False, "--merged": True, "--no-merged": True,
                  "--contains": True, "--no-contains": True, "--points-at": True}
_BRANCH_LISTING = {"-a": True, "--all": True, "-r": True, "--remotes": True, "-v": True,
                   "-vv": True, "--verbose": True, "--show-current": True, "-l": True,
                   "--list": True, "--no-color": False, "--color": False, "-q": False,
                   "--quiet": False, "--column": False, "--no-column": False,
                   "--abbrev": False, "--no-abbrev": False, "-i": False,
                   "--ignore-case": False, "--omit-empty": False}
_TAG_VALUES = {"--sort": False, "--format": False, "--merged": True, "--no-merged": True,
               "--contains": True, "--no-contains": True, "--points-at": True}
_TAG_LISTING = {"-l": True, "--list": True, "--column": False, "--no-column": False,
                "--color": False, "-i": False, "--ignore-case": False, "--omit-empty": False}


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
    frozen = frozen_reads()  # (a check: the tree cannot change, each directory once)
    key = ("git repository", directory)
    if frozen is not None and key in frozen:
        return cast("str | None", frozen[key])
    found = _walk_up(directory)
    if frozen is not None and len(frozen) < 1 << 14:
        frozen[key] = found
    return found


def _walk_up(directory: str) -> str | None:
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
        return None if _lists(args, _BRANCH_VALUES, _BRANCH_LISTING) else changes
    if sub == "tag":
        return None if _lists(args, _TAG_VALUES, _TAG_LISTING) else changes
    if sub == "remote":
        return (
            None
            if not args or args in (["-v"], ["--verbose"]) or args[:1] == ["get-url"]
            else changes
        )
    if sub == "config":
        use = git_config.parse(tuple(Word(a, a) for a in args))
        # a set, an unknown form, or another file (`-f .env --list` prints it)
        return changes if use.sets or use.problem or use.scope in ("file", "blob") else None
    if sub == "stash":
        return None if args[:1] in (["list"], ["show"]) else changes
    if sub == "worktree":
        return None if args[:1] == ["list"] else changes
    if sub == "reflog":
        return None if not args or args[0] == "show" or args[0].startswith("-") else changes
    return None


def _lists(args: list[str], values: dict[str, bool], flags: dict[str, bool]) -> bool:
    """Whether ``git branch ARGS`` / ``git tag ARGS`` only lists: known listing options,
    and either one that implies listing or no name (a name alone creates)."""
    implied = False
    names = 0
    i = 0
    while i < len(args):
        arg = args[i]
        name = arg.split("=", 1)[0]
        if name in values:
            implied = implied or values[name]
            if "=" not in arg:
                i += 1  # its value (`--contains HEAD`)
        elif name in flags:
            implied = implied or flags[name]
        elif arg.startswith("-n") and arg[2:].isdigit() and flags is _TAG_LISTING:
            implied = True  # tag -n5: list with 5 lines of message
        elif arg.startswith("-"):
            return False  # creates, deletes, moves, signs or is unknown
        else:
            names += 1
        i += 1
    return implied or names == 0


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
    """``git diff --no-index A B`` and ``git blame --contents F`` read files anywhere; so
    do files of patterns, revisions or config git reads (``grep -f F``, ``blame -S F``,
    ``--ignore-revs-file F``, ``log -O F``, ``config -f F --list``)."""
    words = list(argv[1:])
    out: list[Word] = list(_named_reads(argv))
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


# ---------------------------------------------------------------------- beyond read-only


def _named_reads(argv: tuple[Word, ...]) -> list[Word]:
    at = _sub_index(argv)
    if at is None or at >= len(argv):
        return []
    sub = argv[at].value
    cmd = argv[at:]
    if sub == "grep":
        return option_values(cmd, "f", ())
    if sub in ("blame", "annotate"):
        return option_values(cmd, "S", ("--ignore-revs-file",))
    if sub in ("log", "show", "diff", "whatchanged", "format-patch", "diff-tree", "diff-index"):
        return option_values(cmd, "O", ("--orderfile",))
    if sub == "archive":
        return option_values(cmd, "", ("--add-file",))
    if sub == "config":
        use = git_config.parse(cmd[1:])
        return [use.file] if use.file is not None and not use.sets else []
    return []


@by_identity  # (asked for by four of git's hooks for the same argv)
def _globals(argv: tuple[Word, ...]) -> tuple[tuple[tuple[str, Word | None], ...], int]:
    """git's global options as (option, value word) and where the sub-command stands."""
    out: list[tuple[str, Word | None]] = []
    i = 1
    while i < len(argv):
        word = argv[i]
        text = word.text
        if text in GLOBAL_WITH_VALUE:
            out.append((text, argv[i + 1] if i + 1 < len(argv) else None))
            i += 2
        elif text.split("=", 1)[0] in GLOBAL_WITH_VALUE:
            name, _, value = text.partition("=")
            out.append((name, Word(value, value) if word.value is not None else None))
            i += 1
        elif text.startswith(("-C", "-c")) and len(text) > 2:
            out.append((text[:2], Word(text[2:], text[2:]) if word.value is not None else None))
            i += 1
        elif text.startswith("-"):
            out.append((text, None))
            i += 1
        else:
            break
    return tuple(out), i


def _sub_index(argv: tuple[Word, ...]) -> int | None:
    return _globals(argv)[1]


#: Sub-command options whose value git runs as a command (git-rebase(1) --exec,
#: git-grep(1) -O, git-difftool(1) --extcmd, git-fetch(1) --upload-pack, ...).
_RUNS_OPTIONS: dict[str, tuple[str, ...]] = {
    "grep": ("-O", "--open-files-in-pager"),
    "rebase": ("-x", "--exec"),
    "difftool": ("-x", "--extcmd"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "clone": ("-u", "--upload-pack", "--template"),
    "ls-remote": ("-u", "--upload-pack"),
    "push": ("--receive-pack", "--exec"),
    "archive": ("--exec",),
    "send-email": ("--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd",
                   "--smtp-server"),
    "filter-branch": ("--setup", "--env-filter", "--tree-filter", "--index-filter",
                      "--parent-filter", "--msg-filter", "--commit-filter", "--tag-name-filter"),
}
#: Sub-commands whose operand is a command (git-bisect(1) run, git-submodule(1) foreach).
_RUNS_OPERANDS = {"bisect": "run", "submodule": "foreach"}


def runs_code(argv: tuple[Word, ...]) -> str | None:
    """Configuration git runs as a program (``-c core.pager=...``, ``-c alias.x=!...``,
    ``git config core.fsmonitor CMD``) and options whose value is a command."""
    options, at = _globals(argv)
    for name, value in options:
        if name in ("-c", "--config-env"):
            if value is None or value.value is None or value.glob:
                return f"git {name} with a value only known at run time can set any " \
                       "configuration, programs included"
            key = value.value.split("=", 1)[0]
            if git_config.code_key(key):
                return f"git {name} {key}=...: git runs that configuration as a program"
        elif name == "--exec-path" and value is not None:
            return "git --exec-path runs git's own programs from another directory"
    if at >= len(argv):
        return None
    sub = argv[at].value
    rest = argv[at + 1 :]
    if sub == "config":
        use = git_config.parse(rest)
        for key in use.keys:
            if git_config.code_key(key):
                return f"git config {key} sets a value git runs as a program"
    if sub == "clone":
        for value in option_values(argv[at:], "c", ("--config",)):
            if value.value is None or git_config.code_key(value.value.split("=", 1)[0]):
                return f"git clone --config {value.raw}: git runs that configuration"
    for form in _RUNS_OPTIONS.get(sub or "", ()):
        for word in rest:
            text = word.text
            if text == "--":
                break
            if form.startswith("--"):
                if text.startswith("--") and long_is(text, form):
                    return f"git {sub} {text}: git runs the value as a command"
            elif text.startswith(form):
                return f"git {sub} {text}: git runs the value as a command"
    operand = _RUNS_OPERANDS.get(sub or "")
    if operand is not None and any(w.text == operand for w in rest):
        return f"git {sub} {operand} runs a command"
    return None


def _directory(argv: tuple[Word, ...], ctx: Context) -> tuple[str | None, int]:
    """Where git runs (the shell's cwd, then each ``-C``) and where its sub-command is;
    None when toolrun cannot tell (``--git-dir``, ``--work-tree``, a computed ``-C``)."""

    options, at = _globals(argv)
    directory = ctx.cwd
    for name, value in options:
        if name == "-C":
            if value is None or directory is None:
                return None, at
            path = word_path(value, directory, ctx.home)
            if path is None:
                return None, at
            directory = path.link
        elif name in ("--git-dir", "--work-tree", "--namespace", "--super-prefix"):
            return None, at
    return directory, at


def _rebased(word: Word, directory: str) -> Word:
    """A relative file word as git, running in ``directory``, opens it."""
    if word.value is None or word.tilde or word.value.startswith("/"):
        return word
    value = posixpath.join(directory, word.value)
    return Word(value, value, word.glob, False)


def file_writes(argv: tuple[Word, ...], ctx: Context) -> tuple[Word, ...] | None:
    """Files git writes because an option or a form says so: ``--output=F`` (diff and
    log), ``format-patch`` patches (``-o DIR``, else the current directory), ``archive
    -o F``, and the configuration file a ``git config`` set lands in. None: unknown."""
    directory, at = _directory(argv, ctx)
    if at >= len(argv):
        return ()
    sub = argv[at].value
    cmd = argv[at:]
    if directory is None:
        # (only when it writes: elsewhere another check refuses the options)
        writes = sub in ("config", "format-patch", "archive", *_CREATES) or any(
            long_is(w.text, "--output") for w in cmd)
        return None if writes else ()
    found: list[Word] = []
    if sub == "config":
        use = git_config.parse(cmd[1:])
        if use.problem is not None:
            return None
        if use.sets:
            found.append(git_config.written_file(use, directory, repository(directory),
                                                 ctx.home))
    elif sub == "format-patch":
        if not any(w.text == "--stdout" for w in cmd):
            out = option_values(cmd, "o", ("--output-directory",))
            base = [_rebased(w, directory) for w in out] or [Word(directory, directory)]
            for w in base:
                # a representative patch file: Edit rules and protection see where it lands
                value = posixpath.join(w.value, "0001.patch") if w.value is not None else None
                found.append(Word(w.raw, value, w.glob, w.tilde))
    elif sub == "archive":
        found.extend(option_values(cmd, "o", ("--output",)))
    elif sub in _CREATES:
        made = _created(sub, cmd)
        if made is None:
            return None
        found.extend(made)
    else:
        found.extend(option_values(cmd, "", ("--output",)))
    return tuple(_rebased(w, directory) for w in found)


#: Sub-commands that create a directory or file named by an operand: (options that take
#: a value, flags; where the created path stands among the operands). git-init(1),
#: git-clone(1), git-worktree(1), git-bundle(1).
_CREATES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "init": (frozenset({"--template", "--separate-git-dir", "-b", "--initial-branch",
                        "--object-format", "--ref-format", "--shared"}),
             frozenset({"-q", "--quiet", "--bare"})),
    "clone": (frozenset({"-b", "--branch", "-o", "--origin", "--depth", "--reference",
                         "--reference-if-able", "--separate-git-dir", "-c", "--config",
                         "--template", "-u", "--upload-pack", "-j", "--jobs", "--filter",
                         "--shallow-since", "--shallow-exclude", "--server-option",
                         "--bundle-uri", "--ref-format", "--revision"}),
              frozenset({"--bare", "--mirror", "-q", "--quiet", "-v", "--verbose", "-n",
                         "--no-checkout", "--recursive", "--recurse-submodules",
                         "--single-branch", "--no-single-branch", "--no-tags", "--tags",
                         "-s", "--shared", "-l", "--local", "--no-local", "--no-hardlinks",
                         "--dissociate", "--sparse", "--progress", "--no-progress",
                         "--remote-submodules", "--no-remote-submodules",
                         "--shallow-submodules", "--no-shallow-submodules",
                         "--also-filter-submodules", "--reject-shallow",
                         "--no-reject-shallow"})),
    "worktree": (frozenset({"-b", "-B", "--reason", "--orphan"}),
                 frozenset({"-f", "--force", "--detach", "-d", "--checkout", "--no-checkout",
                            "--lock", "-q", "--quiet", "--track", "--no-track",
                            "--guess-remote", "--no-guess-remote", "--relative-paths",
                            "--no-relative-paths"})),
    "bundle": (frozenset(), frozenset({"-q", "--quiet", "--progress", "--all"})),
}


def _created(sub: str, cmd: tuple[Word, ...]) -> list[Word] | None:
    """What ``git init DIR`` / ``clone URL DIR`` / ``worktree add DIR`` / ``bundle create
    F`` create (None: an option toolrun does not know, so where is unknown)."""
    values, flags = _CREATES[sub]
    operands: list[Word] = []
    found: list[Word] = []
    words = cmd[1:]
    i = 0
    while i < len(words):
        word = words[i]
        text = word.text
        if text == "--":
            operands.extend(words[i + 1 :])
            break
        if text.startswith("-") and text != "-":
            name, eq, value = text.partition("=")
            if name in values:
                got = Word(value, value) if eq else (words[i + 1] if i + 1 < len(words)
                                                      else None)
                if got is None:
                    return None
                if name == "--separate-git-dir":
                    found.append(got)
                i += 1 if eq else 2
                continue
            if name.startswith("--recurse-submodules") or text in flags:
                i += 1
                continue
            return None
        operands.append(word)
        i += 1
    if sub == "init":
        found.extend(operands[:1] or [Word(".", ".")])
    elif sub == "clone":
        if len(operands) >= 2:
            found.append(operands[1])
        elif operands and operands[0].value is not None:
            # `git clone URL`: a directory named after the repository, here
            name = operands[0].value.rstrip("/").rpartition("/")[2].rpartition(":")[2]
            name = name.removesuffix(".git") or "repo"
            found.append(Word(name, name))
        else:
            return None
    elif sub == "worktree":
        action = operands[0].value if operands else None
        if action == "add" and len(operands) >= 2:
            found.append(operands[1])
        elif action == "move" and len(operands) >= 3:
            found.append(operands[2])
        elif action in ("add", "move"):
            return None
    elif sub == "bundle" and operands[:1] and operands[0].value == "create":
        if len(operands) < 2:
            return None
        found.append(operands[1])
    return found


def content_reads(
    argv: tuple[Word, ...], ctx: Context, guarded: history.Guarded
) -> tuple[str, ...] | None:
    """The Read-guarded paths whose content this git command could print (blobs, patches,
    grep matches, blame, archives); None when toolrun cannot tell, which asks."""
    directory, at = _directory(argv, ctx)
    if at >= len(argv):
        return ()
    if directory is None:
        return None
    sub = argv[at].value
    if sub is None:
        return None
    if sub != "config" and sub in history.NO_CONTENT and not history.shows_hunks(
        sub, argv[at + 1 :]
    ):
        return ()  # (`git push`, `git status`: no content, and no repository to look up)
    repo = repository(directory)
    if repo is None:
        return ()  # not in a repository: nothing comes out of history
    if sub == "config":
        use = git_config.parse(argv[at + 1 :])
        if use.blob is None:
            return ()
        blob = history.blob_path(use.blob.text, directory, repo)
        return guarded((blob,)) if blob else None
    return history.printed(sub, argv[at + 1 :], directory, repo, guarded)


def recursive(argv: tuple[Word, ...]) -> bool:
    """``git grep --untracked`` / ``--no-index`` read the working tree, not only git's."""
    at = _sub_index(argv)
    if at is None or at >= len(argv) or argv[at].value != "grep":
        return False
    return any(w.text in ("--untracked", "--no-index") for w in argv[at + 1 :])
