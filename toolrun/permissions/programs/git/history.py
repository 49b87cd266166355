"""git sub-commands that print file content out of history, the index or the working tree.

``git show HEAD:.env``, ``git log -p``, ``git blame .env``, ``git grep SECRET`` print a
file's content without opening it: :func:`printed` says which repository paths a command
could print, so that Read rules decide them as reads. A ``REV:PATH`` or a pathspec names
its paths; without one, every path HEAD or the index holds may be printed (history
deleted from both is not seen: a pathspec still names it). None means toolrun cannot
tell (revision syntax or options it does not know, a repository it cannot read): ask.
Sources: git-show(1), git-log(1), gitrevisions(7), gitglossary(7) "pathspec".
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Callable, Sequence

from toolrun.permissions.observe import observe
from toolrun.permissions.words import Word

#: Sub-commands that print a diff (patch) only when asked to (-p, -U, -S ...).
_PATCH_ON_REQUEST = frozenset(
    {"log", "whatchanged", "diff-tree", "diff-index", "diff-files", "reflog", "stash"}
)
#: Sub-commands that print a diff or a blob unless told not to.
_PATCH_BY_DEFAULT = frozenset({"show", "diff", "format-patch", "range-diff"})
#: Sub-commands that print file content whatever their options.
_ALL_CONTENT = frozenset({"fast-export", "merge-tree", "bundle"})
#: Sub-commands that never print a file's content (names, hashes, refs, messages at most).
#: Interactive ``-p`` forms (``add -p``, ``checkout -p``) print hunks: see :func:`printed`.
NO_CONTENT = frozenset(
    {"status", "rev-parse", "ls-files", "ls-tree", "describe", "merge-base", "rev-list",
     "show-ref", "count-objects", "name-rev", "for-each-ref", "check-ignore", "check-attr",
     "version", "branch", "tag", "remote", "config", "worktree", "init", "clone", "fetch",
     "pull", "push", "add", "rm", "mv", "commit", "checkout", "switch", "restore", "reset",
     "rebase", "merge", "cherry-pick", "revert", "clean", "gc", "prune", "fsck", "submodule",
     "bisect", "notes", "help", "show-branch", "cherry", "var", "hash-object", "update-index",
     "update-ref", "symbolic-ref", "write-tree", "commit-tree", "read-tree", "mktree",
     "ls-remote", "maintenance", "sparse-checkout", "am", "apply", "stripspace",
     "check-ref-format", "verify-commit", "verify-tag", "mktag", "repack", "pack-refs",
     "interpret-trailers", "column", "credential", "replace", "rerere", "lfs", "shortlog"}
)  # fmt: skip
#: Options that switch patch output off (or print names and numbers only).
_NO_PATCH = frozenset({"-s", "--no-patch"})
_SUMMARY_ONLY = ("--stat", "--numstat", "--shortstat", "--name-only", "--name-status", "--raw",
                 "--summary", "--dirstat", "--check", "--compact-summary")
#: Options of the diff and log family that turn on content (patch, pickaxe, line log).
_PATCH_LONG = ("--patch", "--unified", "--function-context", "--cc", "--dd", "--word-diff",
               "--color-words", "--patch-with-stat", "--patch-with-raw", "--binary",
               "--remerge-diff", "--diff-merges", "--pickaxe-regex", "--pickaxe-all",
               "--find-object", "--full-diff", "--combined-all-paths", "--line-prefix")
_PATCH_SHORT = frozenset("puUWLSGc")
#: Options of the log/diff family whose value is the next word, when not glued.
_LOG_VALUES = frozenset(
    {"-n", "--max-count", "--skip", "--author", "--committer", "--grep", "--since", "--until",
     "--after", "--before", "-L", "-S", "-G", "-O", "--format", "--pretty", "--date",
     "--encoding", "--decorate-refs", "--decorate-refs-exclude", "--find-object",
     "--diff-filter", "--output", "--src-prefix", "--dst-prefix", "--line-prefix",
     "--exclude", "--skip-to", "--rotate-to", "--word-diff-regex", "--min-parents",
     "--max-parents", "--anchored", "-I", "--ignore-matching-lines", "--output-directory",
     "-o", "--subject-prefix", "--to", "--cc", "--in-reply-to", "--base", "--signature",
     "--signature-file", "--suffix", "--start-number", "--reroll-count", "-v", "--creation-factor",
     "--notes", "--interdiff", "--range-diff", "--cover-from-description", "--from"}
)  # fmt: skip
#: Flags of that family toolrun knows (anything else: no narrowing by pathspec).
_LOG_FLAGS = frozenset(
    {"--oneline", "--graph", "--all", "--branches", "--tags", "--remotes", "--decorate",
     "--no-decorate", "--stat", "--numstat", "--shortstat", "--name-only", "--name-status",
     "--raw", "--summary", "--patch", "-p", "-u", "--no-patch", "-s", "--follow",
     "--first-parent", "--merges", "--no-merges", "--reverse", "--abbrev-commit",
     "--no-abbrev-commit", "--color", "--no-color", "--cached", "--staged", "--relative",
     "--no-renames", "-M", "-C", "--find-renames", "--find-copies", "-w", "-b",
     "--ignore-all-space", "--ignore-space-change", "--ignore-blank-lines", "--minimal",
     "--patience", "--histogram", "--word-diff", "--color-words", "--full-history",
     "--simplify-merges", "--ancestry-path", "--left-right", "--cherry-pick", "--cherry-mark",
     "--cherry", "--boundary", "--topo-order", "--date-order", "--author-date-order",
     "--no-walk", "--do-walk", "--source", "--log-size", "--show-signature", "--no-notes",
     "--show-notes", "--standard-notes", "--no-standard-notes", "-z", "--no-prefix",
     "--full-index", "--exit-code", "--quiet", "-q", "--ignore-submodules", "--text", "-a",
     "-R", "--no-ext-diff", "--no-textconv", "--dirstat", "--compact-summary", "--check",
     "-m", "--cc", "--dd", "-c", "--remerge-diff", "--binary", "--stdout", "--no-stat",
     "--numbered", "-N", "--no-numbered", "--root", "--signoff", "--cover-letter",
     "--no-cover-letter", "--keep-subject", "-k", "--thread", "--no-thread", "--no-signature",
     "--zero-commit", "--progress", "--no-index", "--function-context", "-W", "--ita-invisible-in-index",
     "--merge", "--left-only", "--right-only", "--not", "--bisect", "--stdin", "--walk-reflogs",
     "-g", "--regexp-ignore-case", "-i", "--basic-regexp", "--extended-regexp", "-E",
     "--fixed-strings", "-F", "--perl-regexp", "-P", "--all-match", "--invert-grep",
     "--parents", "--children", "--clear-decorations", "--mailmap", "--use-mailmap",
     "--no-mailmap", "--no-use-mailmap", "--full-diff", "--name-rev", "-t",
     "-r", "--expand-tabs", "--no-expand-tabs", "--pickaxe-all", "--pickaxe-regex",
     "--irreversible-delete", "-D", "--ignore-cr-at-eol", "--ignore-space-at-eol",
     "--indent-heuristic", "--no-indent-heuristic", "--default-prefix", "--show-linear-break"}
)  # fmt: skip
_GREP_VALUES = frozenset(
    {"-e", "-f", "-A", "-B", "-C", "--after-context", "--before-context", "--context", "-m",
     "--max-count", "--max-depth", "--threads"}
)  # fmt: skip
_GREP_FLAGS = frozenset(
    {"--cached", "--untracked", "--no-index", "--no-exclude-standard", "--exclude-standard",
     "--recurse-submodules", "-a", "--text", "--textconv", "--no-textconv", "-i",
     "--ignore-case", "-I", "--max-depth", "-r", "--recursive", "--no-recursive", "-w",
     "--word-regexp", "-v", "--invert-match", "-h", "-H", "--full-name", "-E",
     "--extended-regexp", "-G", "--basic-regexp", "-P", "--perl-regexp", "-F",
     "--fixed-strings", "-n", "--line-number", "--column", "-l", "--files-with-matches",
     "--name-only", "-L", "--files-without-match", "-z", "--null", "-o", "--only-matching",
     "-c", "--count", "--color", "--no-color", "--break", "--heading", "-p", "--show-function",
     "-W", "--function-context", "--and", "--or", "--not", "(", ")", "-q", "--quiet",
     "--all-match"}
)  # fmt: skip
_BLAME_VALUES = frozenset(
    {"-L", "-S", "--contents", "--date", "--ignore-rev", "--ignore-revs-file", "--since",
     "--abbrev"}
)  # fmt: skip
_ARCHIVE_VALUES = frozenset({"--format", "-o", "--output", "--prefix", "--remote", "--exec",
                             "--add-file", "--add-virtual-file", "--mtime"})
_CAT_FILE_CONTENT = frozenset({"-p", "blob", "tree", "commit", "tag", "--textconv",
                               "--filters"})
_CAT_FILE_INFO = frozenset({"-t", "-s", "-e", "--batch-check", "--allow-unknown-type",
                            "--buffer", "--follow-symlinks", "-Z", "--unordered",
                            "--use-mailmap", "--no-use-mailmap", "--mailmap", "--no-mailmap"})


def _option_name(text: str) -> str:
    return text.split("=", 1)[0]


def _split(
    args: Sequence[Word], values: frozenset[str], flags: frozenset[str]
) -> tuple[list[str], list[str], list[str], bool] | None:
    """(options, operands before ``--``, operands after it, every option known); None when
    a word is only known at run time."""
    options: list[str] = []
    before: list[str] = []
    after: list[str] = []
    known = True
    dashdash = False
    i = 0
    while i < len(args):
        word = args[i]
        text = word.value
        if text is None or word.glob:
            return None
        if dashdash:
            after.append(text)
        elif text == "--":
            dashdash = True
        elif text.startswith("-") and text != "-":
            options.append(text)
            name = _option_name(text)
            if name in values and "=" not in text:
                if i + 1 < len(args):
                    i += 1
                    value = args[i].value
                    if value is None:
                        return None
                    options.append(value)
            elif name not in flags and name not in values and not _glued(text, values):
                known = False
        else:
            before.append(text)
        i += 1
    return options, before, after, known


def _glued(text: str, values: frozenset[str]) -> bool:
    """``-n5``, ``-U3``, ``-Sfoo``: a known short option with its value attached."""
    if text.startswith("--") or len(text) < 3:
        return False
    return text[:2] in values or text[:2] in ("-U", "-M", "-C", "-B", "-l", "-n") or (
        text[1:].isdigit())


def _patch_requested(options: Sequence[str]) -> bool:
    for text in options:
        if text.startswith("--"):
            if _option_name(text).startswith(_PATCH_LONG):
                return True
        elif text.startswith("-") and any(c in _PATCH_SHORT for c in text[1:2]):
            return True
    return False


def _patch_suppressed(options: Sequence[str]) -> bool:
    if any(o in _NO_PATCH for o in options):
        return True
    summaries = any(_option_name(o).startswith(_SUMMARY_ONLY) for o in options)
    return summaries and not _patch_requested(options)


#: Of some paths, those a Read deny or ask rule covers (the engine's rules).
Guarded = Callable[[tuple[str, ...]], tuple[str, ...]]


def printed(
    sub: str, args: tuple[Word, ...], directory: str, repo: str, guarded: Guarded
) -> tuple[str, ...] | None:
    """The guarded absolute paths (as the repository names them) whose content
    ``git SUB ARGS``, run in ``directory`` of the repository at ``repo``, could print;
    None: toolrun cannot tell."""
    found = _printed(sub, args, directory, repo)
    if found is None or not found:
        return found
    found = guarded(found)
    if found and sub == "diff":
        return _worktree_diff(args, found, directory, repo)
    return found


def shows_hunks(sub: str, args: tuple[Word, ...]) -> bool:
    """Whether a sub-command of :data:`NO_CONTENT` prints hunks all the same (``add -p``)."""
    return sub in ("add", "checkout", "restore", "reset", "commit", "stash") and any(
        w.value is None or w.value in ("-p", "--patch", "-i", "--interactive") for w in args
    )


def _printed(
    sub: str, args: tuple[Word, ...], directory: str, repo: str
) -> tuple[str, ...] | None:
    if sub in NO_CONTENT:
        if shows_hunks(sub, args):
            split = _split(args, frozenset(), frozenset())
            if split is None:
                return None
            return _paths_for(split[2], bool(split[2]), directory, repo)
        return ()
    if sub in _PATCH_ON_REQUEST or sub in _PATCH_BY_DEFAULT:
        return _diff_family(sub, args, directory, repo)
    if sub in ("blame", "annotate"):
        split = _split(args, _BLAME_VALUES, frozenset())
        if split is None:
            return None
        _opts, before, after, _known = split
        # every operand may be the file (the others are a revision): all are read
        return tuple(_in_repo(p, directory, repo) for p in (*before, *after))
    if sub == "grep":
        return _grep(args, directory, repo)
    if sub == "cat-file":
        return _cat_file(args, directory, repo)
    if sub == "archive":
        split = _split(args, _ARCHIVE_VALUES, frozenset({"-l", "--list", "-v", "--verbose",
                                                         "--worktree-attributes", "-0", "-9"}))
        if split is None:
            return None
        _opts, before, after, known = split
        specs = [*before[1:], *after]
        return _paths_for(specs, known, directory, repo)
    if sub in _ALL_CONTENT:
        return tracked(repo)
    return None  # an alias or a sub-command toolrun does not know


def _diff_family(
    sub: str, args: tuple[Word, ...], directory: str, repo: str
) -> tuple[str, ...] | None:
    if sub == "stash":
        if not args or args[0].value != "show":
            return _printed("add", args, directory, repo)  # `stash push -p` prints hunks
        args = args[1:]
    if sub == "reflog" and args and args[0].value in ("expire", "delete", "exists"):
        return ()
    split = _split(args, _LOG_VALUES, _LOG_FLAGS)
    if split is None:
        return None
    options, before, after, known = split
    named: list[str] = []
    revisions_or_paths: list[str] = []
    for operand in before:
        blob = blob_path(operand, directory, repo)
        if blob is not None:
            if blob:
                named.append(blob)
            continue
        revisions_or_paths.append(operand)
    named.extend(
        _in_repo(o.rsplit(":", 1)[1], directory, repo)
        for o in options
        if o.startswith("-L") and ":" in o
    )
    if sub == "show" and revisions_or_paths and all(
        r.endswith("^{tree}") for r in revisions_or_paths
    ):
        revisions_or_paths = []  # `git show HEAD^{tree}` lists names
        if not named:
            return ()
    if sub in ("show", "diff") and named and not revisions_or_paths and not after:
        return tuple(named)  # `git show HEAD:a`, `git diff HEAD:a HEAD:b`: those blobs only
    content = sub in _PATCH_BY_DEFAULT and not _patch_suppressed(options)
    content = content or _patch_requested(options)
    if "-L" in options:
        k = options.index("-L")
        if k + 1 < len(options) and ":" in options[k + 1]:
            named.append(_in_repo(options[k + 1].rsplit(":", 1)[1], directory, repo))
    if not content:
        return tuple(named)
    # operands that exist on disk are pathspecs (git's own disambiguation); the rest
    # are revisions, which do not narrow what is printed
    specs = [*(p for p in revisions_or_paths if _exists(directory, p)), *after]
    found = _paths_for(specs, known, directory, repo)
    if found is None:
        return None
    return (*named, *found)


def _grep(args: tuple[Word, ...], directory: str, repo: str) -> tuple[str, ...] | None:
    split = _split(args, _GREP_VALUES, _GREP_FLAGS)
    if split is None:
        return None
    options, before, after, known = split
    if not any(o in ("-e", "-f") or o.startswith(("-e", "-f")) for o in options):
        before = before[1:]  # the pattern
    specs: list[str] = []
    for operand in before:
        blob = blob_path(operand, directory, repo)
        if blob is not None:
            if blob:
                specs.append(operand.split(":", 1)[1])
        elif _exists(directory, operand):
            specs.append(operand)
    specs.extend(after)
    return _paths_for(specs, known, directory, repo)


def _cat_file(args: tuple[Word, ...], directory: str, repo: str) -> tuple[str, ...] | None:
    texts = [w.value for w in args]
    if any(t is None for t in texts):
        return None
    options = [t for t in texts if t is not None]
    if any(t.startswith("--batch") and not t.startswith("--batch-check") for t in options):
        return None  # object names come from standard input
    if not any(t in _CAT_FILE_CONTENT or t.startswith("--textconv") for t in options):
        if all(t in _CAT_FILE_INFO or t.startswith("--batch-check") or not t.startswith("-")
               for t in options):
            return ()
        return None
    operands = [t for t in options if not t.startswith("-") and t not in _CAT_FILE_CONTENT]
    out: list[str] = []
    for operand in operands:
        blob = blob_path(operand, directory, repo)
        if blob is None:
            return tracked(repo)  # an object id may be any blob
        if blob:
            out.append(blob)
    return tuple(out)


def blob_path(operand: str, directory: str, repo: str) -> str | None:
    """The path of ``REV:PATH``, ``:PATH``, ``:N:PATH`` (``""``: a tree or a commit found by
    message, no file); None when ``operand`` has no such colon."""
    if operand.startswith(":/"):
        return ""  # a commit whose message matches
    depth = 0
    for k, c in enumerate(operand):
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif c == ":" and depth == 0:
            path = operand[k + 1 :]
            if k == 0 and len(path) >= 2 and path[0] in "0123" and path[1] == ":":
                path = path[2:]  # :N:PATH, a stage of the index
            if not path:
                return ""
            if path.startswith(("./", "../")) or path in (".", ".."):
                return posixpath.normpath(posixpath.join(directory, path))
            return posixpath.normpath(posixpath.join(repo, path))
    return None


def _in_repo(path: str, directory: str, _repo: str) -> str:
    """A pathspec or a file operand: relative to where git runs."""
    return posixpath.normpath(posixpath.join(directory, path))


def _exists(directory: str, path: str) -> bool:
    return bool(observe(os.path.lexists, posixpath.join(directory, path)))


def _paths_for(
    specs: Sequence[str], known: bool, directory: str, repo: str
) -> tuple[str, ...] | None:
    """What pathspecs ``specs`` let through: every tracked path when there are none, any
    is magic or a glob, or an option toolrun does not know may have eaten a word."""
    every = tracked(repo)
    if every is None:
        return None
    if not specs or not known or any(s.startswith(":") or any(c in s for c in "*?[")
                                     for s in specs):
        return every
    out: list[str] = []
    for spec in specs:
        base = posixpath.normpath(posixpath.join(directory, spec))
        out.append(base)  # (a path only history holds is still named)
        prefix = base.rstrip("/") + "/"
        out.extend(p for p in every if p.startswith(prefix))
    return tuple(dict.fromkeys(out))


# ---------------------------------------------------------------------- what git holds

_TRACKED: dict[tuple[str, tuple[object, ...]], tuple[str, ...] | None] = {}


def tracked(repo: str) -> tuple[str, ...] | None:
    """Every path HEAD or the index of ``repo`` holds (absolute); None when git cannot
    list them. Listed once per state of the repository (index, HEAD and refs)."""
    state = observe(_state, repo)
    key = (repo, state)
    if key not in _TRACKED:
        if len(_TRACKED) > 64:
            _TRACKED.clear()
        _TRACKED[key] = _list(repo)
    return _TRACKED[key]


def _stat(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _state(repo: str) -> tuple[object, ...]:
    """What the listing depends on: the index, HEAD and the ref it names, packed refs."""
    git_dir = posixpath.join(repo, ".git")
    try:
        with open(posixpath.join(git_dir, "HEAD"), encoding="utf-8", errors="replace") as f:
            head = f.read(512)
    except OSError:
        head = ""
    ref = head[5:].strip() if head.startswith("ref: ") else ""
    return (
        _stat(git_dir),
        head,
        _stat(posixpath.join(git_dir, "index")),
        _stat(posixpath.join(git_dir, ref)) if ref else None,
        _stat(posixpath.join(git_dir, "packed-refs")),
    )


#: git run by toolrun itself: nothing the repository configures may run or be written.
_SAFE_GIT = ("git", "--no-optional-locks", "-c", "core.fsmonitor=false", "-c",
             "core.untrackedCache=false", "-c", "core.hooksPath=/dev/null")


def _list(repo: str) -> tuple[str, ...] | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    names: list[str] = []
    for args in (("ls-files", "-z", "--cached"), ("ls-tree", "-r", "-z", "--name-only", "HEAD")):
        try:
            done = subprocess.run([*_SAFE_GIT, "-C", repo, *args], capture_output=True,
                                  env=env, timeout=10, check=False, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            if args[0] == "ls-tree":
                continue  # no commit yet
            return None
        names.extend(done.stdout.decode("utf-8", "surrogateescape").split("\0"))
    return tuple(dict.fromkeys(posixpath.join(repo, n) for n in names if n))


# ---------------------------------------------------------------------- what a diff shows


def _worktree_diff(
    args: tuple[Word, ...], paths: tuple[str, ...], directory: str, repo: str
) -> tuple[str, ...] | None:
    """``git diff`` without revisions prints only what changed: of ``paths``, those whose
    working tree file differs from the index (or, ``--cached``, the index from HEAD)."""
    texts = [w.value or "" for w in args]
    end = texts.index("--") if "--" in texts else len(texts)
    operands = [t for t in texts[:end] if not t.startswith("-")]
    revisions = [t for t in operands if not _exists(directory, t)]
    cached = "--cached" in texts or "--staged" in texts
    if "--no-index" in texts:
        return paths
    if revisions and revisions != ["HEAD"]:
        return paths  # against another commit: anything tracked may differ
    key = observe(_diff_state, repo, paths)
    hit = _CHANGED.get(key)
    if hit is None:
        if len(_CHANGED) > 256:
            _CHANGED.clear()
        hit = _CHANGED[key] = _changed(repo, paths)
    if hit is None:
        return None
    index_vs_head, worktree_vs_index = hit
    if cached:
        return index_vs_head
    if revisions:  # `git diff HEAD`: the working tree against HEAD
        return tuple(dict.fromkeys((*index_vs_head, *worktree_vs_index)))
    return worktree_vs_index


_CHANGED: dict[object, tuple[tuple[str, ...], tuple[str, ...]] | None] = {}


def _diff_state(repo: str, paths: tuple[str, ...]) -> tuple[object, ...]:
    return (repo, paths, _state(repo), tuple(_stat(p) for p in paths))


def _changed(
    repo: str, paths: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(index differs from HEAD, working tree differs from the index) among ``paths``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    rel = [posixpath.relpath(p, repo) for p in paths]
    out: list[tuple[str, ...]] = []
    for args in (("diff-index", "--cached", "--name-only", "-z", "HEAD"),
                 ("ls-files", "-z", "--modified", "--deleted")):
        try:
            done = subprocess.run(
                [*_SAFE_GIT, "-C", repo, "--literal-pathspecs", *args, "--", *rel],
                capture_output=True, env=env, timeout=10, check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            if args[0] == "diff-index":  # no commit yet: everything in the index is new
                out.append(paths)
                continue
            return None
        names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
        out.append(tuple(dict.fromkeys(posixpath.join(repo, n) for n in names if n)))
    return out[0], out[1]
