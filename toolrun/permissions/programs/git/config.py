"""git configuration: which forms of ``git config`` set a value, where, and which keys are code.

A set is a write of the configuration file it lands in (``.git/config`` by default,
``~/.gitconfig`` for ``--global``, ...), never a read. A key whose value git runs as a
program (``core.fsmonitor``, ``alias.*``, ``diff.*.textconv``, ``include.path`` ...)
makes the command not analysable: the next harmless-looking ``git status`` runs it.
Sources: git-config(1), gitattributes(5), githooks(5); Claude Code advisory
GHSA-j4h9-wv2m-wrf7 (``core.fsmonitor`` via an allowed ``git config``).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass

from toolrun.permissions.observe import observe
from toolrun.permissions.words import Word

#: Sections every key of which is code or names more configuration.
_CODE_SECTIONS = frozenset(
    {"alias", "pager", "filter", "include", "includeif", "credential", "difftool", "mergetool",
     "man", "browser", "instaweb", "trailer", "sendemail"}
)  # fmt: skip
#: Keys git runs (or that change what it runs or where it writes).
_CODE_KEYS = frozenset(
    {"core.pager", "core.fsmonitor", "core.sshcommand", "core.editor", "core.hookspath",
     "core.askpass", "core.gitproxy", "core.alternaterefscommand", "core.worktree",
     "core.attributesfile", "diff.external", "diff.tool", "merge.tool", "sequence.editor",
     "gpg.program", "uploadpack.packobjectshook", "web.browser", "interactive.difffilter",
     "init.templatedir", "protocol.allow", "ssh.variant", "safe.directory"}
)  # fmt: skip
#: A last name part ending so names a program, a hook or a file git reads config from.
_CODE_SUFFIXES = (
    "cmd", "command", "program", "helper", "hook", "editor", "pager", "driver", "textconv",
    "external", "proxy", "browser", "viewer", "uploadpack", "receivepack", "allow",
    "smtpserver", "vcs", "update", "fsmonitor",
)  # fmt: skip

#: Options of ``git config`` that take the next word as their value.
_VALUE = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value",
                    "--url"})
_FLAGS = frozenset(
    {"--global", "--system", "--local", "--worktree", "--includes", "--no-includes",
     "--show-origin", "--show-scope", "-z", "--null", "--name-only", "--bool", "--int",
     "--bool-or-int", "--path", "--expiry-date", "--fixed-value", "--all", "--regexp",
     "--no-type"}
)  # fmt: skip
_READ_ACTIONS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
     "-l", "--list", "get", "list"}
)  # fmt: skip
_WRITE_ACTIONS = frozenset(
    {"--add", "--replace-all", "--unset", "--unset-all", "--rename-section", "--remove-section",
     "-e", "--edit", "set", "unset", "rename-section", "remove-section", "edit"}
)  # fmt: skip
_SUBCOMMANDS = frozenset({"get", "list", "set", "unset", "rename-section", "remove-section",
                          "edit"})


def code_key(key: str) -> bool:
    """Whether git runs the value of ``key`` as a program (or reads config from it)."""
    key = key.lower()
    section, _, rest = key.partition(".")
    if section in _CODE_SECTIONS or key in _CODE_KEYS:
        return True
    last = rest.rpartition(".")[2]
    if section in ("diff", "merge", "remote", "submodule", "gpg") and rest.count(".") >= 1:
        return True  # diff.<driver>.*, merge.<driver>.*, remote.<name>.*, ...: per-driver code
    return last.endswith(_CODE_SUFFIXES)


@dataclass(frozen=True, slots=True)
class ConfigUse:
    """What one ``git config`` command does (``problem``: toolrun cannot tell)."""

    sets: bool
    scope: str  # local, worktree, global, system or file
    file: Word | None
    keys: tuple[str, ...]
    blob: Word | None = None
    problem: str | None = None


def parse(args: tuple[Word, ...]) -> ConfigUse:
    """``git config ARGS`` (the words after ``config``), as git-config(1) reads them."""
    scope, file, blob = "local", None, None
    action: str | None = None
    positional: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        text = word.value
        if text is None or word.glob:
            return ConfigUse(True, scope, file, (), problem=f"{word.raw} is only known at run time")
        name, eq, value = text.partition("=")
        if text.startswith("-") and text != "-":  # (parse-options: options anywhere)
            if text.startswith("-f") and len(text) > 2:
                scope, file = "file", Word(text[2:], text[2:])  # -fFILE
            elif name in _VALUE:
                if eq:
                    got = Word(value, value)
                elif i + 1 < len(args):
                    i += 1
                    got = args[i]
                else:
                    return ConfigUse(True, scope, file, (), problem=f"{text} without a value")
                if name in ("-f", "--file"):
                    scope, file = "file", got
                elif name == "--blob":
                    scope, blob = "blob", got
            elif text in ("--global", "--system", "--local", "--worktree"):
                scope = text[2:]
            elif text in _READ_ACTIONS or text in _WRITE_ACTIONS:
                action = text
            elif text not in _FLAGS:
                return ConfigUse(True, scope, file, (), problem=f"git config {text} is an "
                                 "option toolrun does not know")
        elif action is None and not positional and text in _SUBCOMMANDS:
            action = text
        else:
            positional.append(text)
        i += 1
    if action is None:
        sets = len(positional) >= 2  # `git config name value`; a bare name reads it
    else:
        sets = action in _WRITE_ACTIONS
    keys: tuple[str, ...] = ()
    if sets and positional:
        keys = tuple(positional[:2]) if action in ("--rename-section", "rename-section") else (
            positional[0],)
    return ConfigUse(sets, scope, file, keys, blob)


def written_file(use: ConfigUse, directory: str, repository: str | None, home: str) -> Word:
    """The configuration file a set lands in (git-config(1), FILES)."""
    if use.scope == "file" and use.file is not None:
        return use.file
    if use.scope == "global":
        own = os.environ.get("GIT_CONFIG_GLOBAL")
        if own:
            return Word(own, own)
        dot = posixpath.join(home, ".gitconfig")
        xdg_home = os.environ.get("XDG_CONFIG_HOME") or posixpath.join(home, ".config")
        xdg = posixpath.join(xdg_home, "git", "config")
        # git writes ~/.gitconfig unless only the XDG file exists
        if not observe(os.path.exists, dot) and observe(os.path.exists, xdg):
            return Word(xdg, xdg)
        return Word(dot, dot)
    if use.scope == "system":
        path = os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"
        return Word(path, path)
    base = posixpath.join(repository or directory, ".git")
    name = "config.worktree" if use.scope == "worktree" else "config"
    path = posixpath.join(base, name)
    return Word(path, path)
