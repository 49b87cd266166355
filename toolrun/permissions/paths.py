"""Paths: resolution, gitignore-style rule patterns, the workspace boundary, protected paths.

Every path is made absolute and normalised (``//`` collapsed, ``..`` applied where
the kernel applies it: after the symlinks before it) before anything is matched;
:class:`ResolvedPath` also carries the path with symlinks resolved, because an
allow rule must match both the link and its target while a deny rule needs only
one of them.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from toolrun.dataclass_init import fast_init
from toolrun.errors import ToolError
from toolrun.permissions.observe import observe
from toolrun.permissions.tilde import expand_tilde, tilde_prefix

Behavior = Literal["allow", "ask", "deny"]

# What a write may never be approved for automatically: the files that configure what runs
# later (git, the shell, editors, package managers, agents), where one written line is code.
# Sources: Claude Code's documented protected paths (docs/permission-modes "Protected
# paths": .git .claude .vscode .idea .husky, .gitconfig .gitmodules .bashrc .zshrc .npmrc
# .mcp.json .claude.json, ...) and sandbox-runtime's DANGEROUS_FILES / DANGEROUS_DIRECTORIES
# (src/sandbox/sandbox-utils.ts: .gitconfig .gitmodules .bashrc .bash_profile .zshrc
# .zprofile .profile .ripgreprc .mcp.json; .git .vscode .idea, .claude/commands, .claude/agents).
#
#   name                     why                                             source
#   .git/ (all of it)        hooks/, config, config.worktree, info/,         Claude Code, srt
#                            commondir, worktrees/*/, modules/*/config: git
#                            runs hooks and config values (core.fsmonitor)
#   .claude/ .vscode/ .idea/ agent and editor settings that run commands     Claude Code, srt
#   .husky/                  git hooks managed by husky                      Claude Code
#   .ssh/ .gnupg/            keys and their config (ProxyCommand)            by hand
#   .gitconfig .gitmodules   git configuration, submodule URLs/updates       Claude Code, srt
#   ~/.config/git/           git's XDG user configuration (config,           issue 24, git-config(1)
#                            attributes, ignore): the twin of ~/.gitconfig
#   etc/gitconfig            git's system configuration ($(prefix)/etc)      issue 24, git-config(1)
#   .ripgreprc               rg reads options from it (--pre runs a program) srt
#   shell rc files           run by every new shell                          Claude Code, srt
#   .npmrc .yarnrc .pypirc   package manager config (scripts, registries)    Claude Code
#   .netrc .envrc            credentials; direnv runs .envrc                 by hand
#   .mcp.json .claude.json   MCP servers are commands                        Claude Code, srt
#   toolrun.yaml/.yml        toolrun's own rules                             toolrun
#   X.git/hooks/ ...         a bare repository's hooks and config            by hand (git init --bare)
#
# Not protected: .gitattributes. Attributes only *name* filter/diff/merge drivers; the
# commands a driver runs live in git's config, which is protected, and .gitattributes is an
# ordinary tracked project file (neither Claude Code nor srt lists it).
#
# Names are compared in lower case, as sandbox-runtime does (normalizeCaseForComparison):
# on a case-insensitive filesystem (macOS, Windows) `.GIT/hooks` is `.git/hooks`.
PROTECTED_DIRS = frozenset(
    {".git", ".toolrun", ".claude", ".vscode", ".idea", ".husky", ".ssh", ".gnupg"}
)
PROTECTED_FILES = frozenset(
    {
        ".gitconfig",
        ".gitmodules",
        ".ripgreprc",
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".zlogin",
        ".zlogout",
        ".inputrc",
        # twins of .bashrc that the other shells run at start (bash(1) on Debian sources
        # .bash_aliases; ksh(1), mksh(1), csh(1)/tcsh(1) man pages)
        ".bash_aliases",
        ".kshrc",
        ".mkshrc",
        ".cshrc",
        ".tcshrc",
        ".login",
        # configuration that turns a rule-allowed `curl URL` / `wget URL` into a write
        # (curl manual: ~/.curlrc, -o in a config file; GNU wget manual: wgetrc output)
        ".curlrc",
        ".wgetrc",
        ".envrc",
        ".npmrc",
        ".yarnrc",
        ".pypirc",
        ".netrc",
        ".mcp.json",
        ".claude.json",
        "toolrun.yaml",
        "toolrun.yml",
    }
)
#: A directory (or file) protected where it follows the one named first: (parent, name).
PROTECTED_NESTED: dict[tuple[str, str], str] = {
    (".config", "git"): ".config/git/ is git's user configuration",
    ("etc", "gitconfig"): "etc/gitconfig is git's system configuration",
    # fish runs ~/.config/fish/config.fish and conf.d/* at start (fish docs, "Configuration")
    (".config", "fish"): ".config/fish/ is fish's start-up configuration",
}
#: What git keeps in a repository directory; protected below a bare one (``name.git/``).
GIT_DIR_ENTRIES = frozenset(
    {"hooks", "config", "config.worktree", "info", "commondir", "worktrees", "modules"}
)
#: Writes that look like files but are not (never checked against rules).
EXEMPT_WRITE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def normalise(path: str) -> str:
    """``os.path.normpath`` plus POSIX's leading ``//`` collapsed to ``/``."""
    norm = posixpath.normpath(path)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    return norm


def absolute(path: str, base: str, home: str) -> str:
    """``path`` made absolute against ``base``, with a leading ``~`` expanded, and ``..``
    applied where the kernel applies it (:func:`physical`); ``base`` has no ``..``."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    if not path.startswith("/"):
        path = base.rstrip("/") + "/" + path
    if ".." not in path:  # (the usual path: nothing the disk could change)
        return normalise(path)
    return physical(path)


def physical(path: str) -> str:
    """An absolute path with each ``..`` applied as the kernel applies it: to the directory
    the path so far *leads to* (its symlinks followed), not to the string before it.

    ``<ws>/src/link/../ws`` with ``src/link -> T/outside`` is ``T/ws``, not ``<ws>/src/ws``.
    Where folding the string names the same directory, the written form is kept (rules
    and the boundary see the path as given); elsewhere the ``..`` leaves from the
    resolved directory. The rest of the path is kept as written (symlinks after the last
    ``..`` are the target's business: :func:`realpath`).
    """
    return observe(_physical, path)[0]


def unsettled(path: str) -> str | None:
    """The name a ``..`` of ``path`` (absolute) follows that does not exist now, if any.

    The kernel cannot walk such a ``..`` yet; whatever a command makes there before it
    runs (a symlink) decides where it leads, so the folded string is only a guess.
    """
    return observe(_physical, path)[1] if ".." in path else None


def _physical(path: str) -> tuple[str, str | None]:
    parts = [p for p in path.split("/") if p and p != "."]
    out: list[str] = []
    missing: str | None = None
    for part in parts:
        if part != "..":
            out.append(part)
            continue
        if not out:
            continue  # /.. is /
        here = "/" + "/".join(out)
        real = realpath(here)
        folded = "/" + "/".join(out[:-1])
        if missing is None and not os.path.lexists(real):
            missing = here
        up = posixpath.dirname(real)
        if realpath(folded) == up:
            out.pop()  # (the string's parent is the kernel's: keep the written form)
        else:
            out = [p for p in up.split("/") if p]
    return "/" + "/".join(out), missing


class PathInputError(ToolError):
    """A tool's path input that names no file toolrun can decide on (NUL, ``~user``)."""


def tool_path(given: str, *, base: str, home: str, field: str = "path") -> str:
    """The absolute path a tool's path input names: what the engine decides on and the
    tool opens (both call this, so they cannot disagree).

    Relative paths are taken from ``base`` (the workspace); ``..`` is folded on the
    string, and the tool opens that folded string, so a symlink before a ``..`` cannot
    lead the open elsewhere. ``~`` and ``~/...`` are the home directory (through the
    one tilde expander). ``~user``, ``~+``, ``~-`` and ``~N`` are refused rather than
    guessed, as in permission rules: ``./~name`` names a file called ``~name``.
    """
    if "\0" in given:
        raise PathInputError(f"{field}: the path contains a NUL byte")
    if not given:
        raise PathInputError(f"{field}: the path is empty")
    split = tilde_prefix(given)
    if split is not None:
        if split[0]:
            raise PathInputError(
                f"{field}: {given!r}: only '~' and '~/' (the home directory) are expanded in "
                f"a tool's path, not '~{split[0]}'; write './{given}' for a file of that name"
            )
        given = expand_tilde(given, home=home)
    if not given.startswith("/"):
        given = base.rstrip("/") + "/" + given
    return normalise(given)


def glob_base(pattern: str, *, root: str, home: str) -> tuple[str, str]:
    """``(directory, rest)``: the folder a Glob pattern walks and the pattern below it.

    The leading segments without wildcards are a path (taken from ``root``, through
    :func:`tool_path`); the rest must stay below that folder, so ``..`` after a wildcard
    is refused.
    """
    if not pattern:
        return root, ""
    segments = pattern.split("/")
    fixed = 0
    while fixed < len(segments) and not any(c in segments[fixed] for c in "*?["):
        fixed += 1
    if ".." in segments[fixed:]:
        raise PathInputError(f"pattern: {pattern!r}: '..' after a wildcard")
    prefix = "/".join(segments[:fixed])
    if pattern.startswith("/") and not prefix:
        prefix = "/"
    directory = tool_path(prefix, base=root, home=home, field="pattern") if prefix else root
    rest = "/".join(s for s in segments[fixed:] if s)
    if fixed == len(segments):  # no wildcard: the pattern names one path
        directory, rest = posixpath.dirname(directory), posixpath.basename(directory)
    return directory, rest


@fast_init
@dataclass(frozen=True, slots=True)
class ResolvedPath:
    """A path as written (``given``); absolute, with each ``..`` applied where the kernel
    applies it but other symlinks kept (``link``); with every symlink resolved (``target``)."""

    given: str
    link: str
    target: str

    @property
    def via_symlink(self) -> bool:
        return self.link != self.target

    @property
    def forms(self) -> tuple[str, ...]:
        return (self.link,) if self.link == self.target else (self.link, self.target)


def resolve(path: str, base: str, home: str) -> ResolvedPath:
    """``path`` from ``base`` as the kernel walks it: ``link`` has each ``..`` applied to
    where the path so far leads (:func:`physical`), ``target`` every symlink followed."""
    link = absolute(path, base, home)
    return ResolvedPath(path, link, realpath(link))


def resolve_tool_path(given: str, *, base: str, home: str, field: str = "path") -> ResolvedPath:
    """:func:`tool_path` and where it leads now (:class:`PathInputError` if it names none)."""
    link = tool_path(given, base=base, home=home, field=field)
    return ResolvedPath(given, link, realpath(link))


#: Directories whose resolved form is known (the workspace and additionalDirectories of
#: every engine): resolving a path below one only needs to look at the part below it.
_KNOWN: dict[str, str] = {}


def _remember(norm: str, real: str) -> None:
    if len(_KNOWN) < 256:
        _KNOWN[norm] = real


def realpath(link: str) -> str:
    """``os.path.realpath`` of an absolute normalised path (symlinks resolved, missing
    parts kept), reading only the components below a known root when there is one."""
    return observe(_realpath, link)


#: While set: paths found missing, below a known root. Only while nothing can create
#: them (``frozen_tree``: a check, which runs nothing), so that a path below one need
#: not be looked up again (a plan of new paths made most of its lookups fail the same way).
_missing: set[str] | None = None
#: While set: paths found there and not symlinks, below a known root (the directories of
#: a real workspace: each new file below them read them all again).
_present: set[str] | None = None
MAX_MISSING = 1 << 14
#: While set: other reads of the tree, remembered by whoever makes them (by a key of its
#: own): where git finds the repository of a directory, which every git command asks.
_frozen_reads: dict[tuple[str, str], object] | None = None


@contextlib.contextmanager
def frozen_tree() -> Iterator[None]:
    """Remember the paths found missing, and those found there that are not symlinks,
    while the files cannot change (nothing runs)."""
    global _missing, _present, _frozen_reads
    outer = _missing, _present, _frozen_reads
    _missing, _present, _frozen_reads = set(), set(), {}
    try:
        yield
    finally:
        _missing, _present, _frozen_reads = outer


def frozen_reads() -> dict[tuple[str, str], object] | None:
    """Where a read of the tree may be remembered while it cannot change (None: it can)."""
    return _frozen_reads


def _realpath(link: str) -> str:
    best = ""
    for root in _KNOWN:
        if len(root) > len(best) and (link == root or link.startswith(root + "/")):
            best = root
    if not best:
        return normalise(os.path.realpath(link))
    current = _KNOWN[best]
    rest = [p for p in link[len(best) :].split("/") if p]
    missing, present = _missing, _present
    for i, part in enumerate(rest):
        candidate = f"{current}/{part}" if current != "/" else f"/{part}"
        if missing is not None and candidate in missing:
            return "/".join([candidate, *rest[i + 1 :]])  # (as below, without looking)
        if present is not None and candidate in present:
            current = candidate  # (as below, without looking)
            continue
        try:
            os.readlink(candidate)
        except (FileNotFoundError, NotADirectoryError) as exc:
            # Missing: nothing below it exists either, and realpath keeps it all as it is.
            if missing is not None and isinstance(exc, FileNotFoundError):
                if len(missing) >= MAX_MISSING:
                    missing.clear()
                missing.add(candidate)
            return "/".join([candidate, *rest[i + 1 :]])
        except OSError:  # not a symlink: realpath keeps it as it is
            if present is not None:
                if len(present) >= MAX_MISSING:
                    present.clear()
                present.add(candidate)
            current = candidate
            continue
        return normalise(os.path.realpath("/".join([candidate, *rest[i + 1 :]])))
    return current


def variants(path: str) -> tuple[str, ...]:
    """A directory as given and with symlinks resolved (both are used as rule bases)."""
    norm = normalise(path)
    real = normalise(observe(os.path.realpath, norm))
    _remember(norm, real)
    return (norm,) if norm == real else (norm, real)


def is_within(path: str, root: str) -> bool:
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root + "/")


# --------------------------------------------------------------------------- boundary


@dataclass(frozen=True, slots=True)
class Boundary:
    """The workspace plus ``additionalDirectories``, each as given and resolved."""

    roots: tuple[str, ...]

    @classmethod
    def of(cls, directories: Iterable[str]) -> Boundary:
        roots: list[str] = []
        for directory in directories:
            roots.extend(variants(directory))
        return cls(tuple(dict.fromkeys(roots)))

    def root_of(self, path: str) -> str | None:
        best: str | None = None
        for root in self.roots:
            if is_within(path, root) and (best is None or len(root) > len(best)):
                best = root
        return best

    def contains(self, path: ResolvedPath) -> bool:
        """Inside only when the link *and* its target are inside."""
        return all(self.root_of(form) is not None for form in path.forms)

    def placed(self, path: ResolvedPath) -> tuple[bool, str | None]:
        """(:meth:`contains`, :meth:`root_of` the link), the link's root looked up once."""
        root = self.root_of(path.link)
        inside = root is not None and (
            path.link == path.target or self.root_of(path.target) is not None
        )
        return inside, root


# --------------------------------------------------------------------------- protection


def protected_reason(path: ResolvedPath, boundary: Boundary) -> str | None:
    """Why a write to ``path`` is never approved automatically (None when it may be)."""
    for form in path.forms:
        root = boundary.root_of(form)
        rest = form[len(root) :] if root is not None and root != "/" else form
        parts = [p for p in rest.lower().split("/") if p]
        last = len(parts) - 1
        for i, part in enumerate(parts):
            if part in PROTECTED_DIRS:
                if part == ".claude" and i < last and parts[i + 1] == "worktrees":
                    continue
                return f"{part}/ is a protected directory"
            if i and (parts[i - 1], part) in PROTECTED_NESTED:
                return PROTECTED_NESTED[parts[i - 1], part]
            if i < last and part.endswith(".git") and parts[i + 1] in GIT_DIR_ENTRIES:
                return f"{part}/{parts[i + 1]} is a bare repository's {parts[i + 1]}"
        if parts and parts[-1] in PROTECTED_FILES:
            return f"{parts[-1]} is a protected file"
    return None


def critical_reason(path: ResolvedPath, *, home: str, anchors: Iterable[str]) -> str | None:
    """Why removing ``path`` would be catastrophic: ``/``, a top-level dir, ~, the workspace or
    a parent of it (``anchors`` are the workspace, the cwd and their resolved forms)."""
    for form in path.forms:
        if form == "/":
            return "it is the filesystem root"
        if form.count("/") == 1:
            return f"{form} is a top-level directory"
        if is_within(home, form):
            return "it is the home directory or a parent of it"
        for anchor in anchors:
            if is_within(anchor, form):
                return f"it is {anchor} or a parent of it"
    return None


# --------------------------------------------------------------------------- patterns


def _has_glob(segment: str) -> bool:
    return any(c in "*?[" for c in segment)


def _anchored(base: str, segments: list[str]) -> str:
    """Regex for ``base/segments...``; ``..`` before any glob folds into the base."""
    literal = [p for p in base.split("/") if p]
    pieces: list[str] = []
    for seg in segments:
        if seg == "..":
            if pieces:
                raise ValueError("'..' after a wildcard in a path pattern")
            if literal:
                literal.pop()
            continue
        if seg == ".":
            continue
        if pieces or _has_glob(seg) or seg == "**":
            pieces.append(seg)
        else:
            literal.append(seg)
    regex = "".join("/" + re.escape(p) for p in literal)
    return regex + _pieces_regex(pieces)


# pathspec's gitignore translation ends every pattern with this group (a match may be
# a directory followed by more); toolrun adds its own "and everything below" suffix.
_PATHSPEC_TAIL = "(?:(?P<ps_d>/)|$)"


def _pieces_regex(pieces: list[str]) -> str:
    """Regex for the glob part of a pattern, as gitignore reads it (through pathspec).

    Claude Code documents Read/Edit patterns as gitignore patterns; pathspec is the
    maintained implementation of git's wildmatch (``*``, ``?``, classes, ``**``,
    escapes). Anchoring (which base the pattern hangs from) stays toolrun's: it is
    Claude Code's, not git's.
    """
    while pieces and pieces[-1] == "**":
        pieces = pieces[:-1]  # "a/**" covers what is below a; the caller adds that
    if not pieces:
        return "(?:/.*)?"
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    # A leading "/" anchors the text, so "!" and "#" are never read as gitignore
    # negation or comment; an escaped trailing space is kept (gitignore trims them).
    text = "/" + "/".join(pieces)
    if text.endswith(" "):
        text = text[:-1] + "\\ "
    regex: str | None = GitIgnoreSpecPattern.pattern_to_regex(text)[0]
    if regex is None or not regex.startswith("^") or not regex.endswith(_PATHSPEC_TAIL):
        raise ValueError(f"{'/'.join(pieces)!r} is not a pattern gitignore can match")
    return "/" + regex[1 : -len(_PATHSPEC_TAIL)]


def _alternatives(regexes: Iterable[str]) -> str:
    unique = list(dict.fromkeys(regexes))
    return unique[0] if len(unique) == 1 else "(?:" + "|".join(unique) + ")"


def path_pattern_regex(
    pattern: str,
    *,
    behavior: Behavior,
    workspace: tuple[str, ...],
    source_root: tuple[str, ...],
    home: tuple[str, ...],
) -> str:
    """A regex (for ``fullmatch``) over absolute normalised paths for one Read/Edit pattern.

    ``//p`` absolute, ``~/p`` home, ``/p`` relative to the rule's source root, ``./p``
    and ``p`` relative to the workspace. A pattern with no ``/`` (or a single
    ``dir/`` or, in deny/ask, ``dir/**``) floats: it matches at any depth — below the
    workspace for allow rules, anywhere for deny and ask rules. A match also covers
    everything below the matched path (a denied directory denies its files).
    """
    bases: tuple[str, ...]
    if pattern.startswith("//"):
        bases, rest = ("/",), pattern[2:]
    elif pattern == "~" or pattern.startswith("~/"):
        bases, rest = home, pattern[2:]
    elif pattern.startswith("/"):
        bases, rest = source_root, pattern[1:]
    elif pattern.startswith("./"):
        bases, rest = workspace, pattern[2:]
    else:
        bases, rest = workspace, pattern
        segments = [s for s in rest.split("/") if s and s != "."]
        if behavior != "allow" and len(segments) == 2 and segments[1] == "**":
            segments = segments[:1]  # deny/ask: "dir/**" matches dir/ at any depth
        lead = 0
        while lead < len(segments) and segments[lead] == "**":
            lead += 1
        core = segments[lead:]
        if core and ".." not in core and (lead > 0 or len(segments) == 1):
            prefix = "" if behavior != "allow" else _alternatives(re.escape(b) for b in bases)
            return f"{prefix}(?:/.*)?{_pieces_regex(core)}(?:/.*)?"
    segments = [s for s in rest.split("/") if s]
    body = _alternatives(_anchored(b, segments) for b in bases)
    if body.endswith("(?:/.*)?"):
        return body
    return f"{body}(?:/.*)?"


def pattern_problem(pattern: str, behavior: Behavior) -> str | None:
    """Why a Read/Edit pattern cannot be matched (so loading the config says so, with
    its place, before anything runs), or None. The bases do not change the answer."""
    try:
        path_pattern_regex(pattern, behavior=behavior, workspace=("/w",),
                           source_root=("/r",), home=("/h",))
    except ValueError as exc:
        return str(exc)
    return None


@dataclass(frozen=True, slots=True)
class PathPattern:
    """A Read or Edit rule's path pattern, compiled to a regex over absolute paths."""

    text: str
    regex: re.Pattern[str]

    def matches(self, path: str) -> bool:
        return self.regex.fullmatch(path) is not None


def compile_path_pattern(
    pattern: str,
    *,
    behavior: Behavior,
    workspace: tuple[str, ...],
    source_root: tuple[str, ...],
    home: tuple[str, ...],
) -> PathPattern:
    regex = path_pattern_regex(
        pattern, behavior=behavior, workspace=workspace, source_root=source_root, home=home
    )
    return PathPattern(pattern, re.compile(regex, re.DOTALL))
