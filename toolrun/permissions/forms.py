"""The strings permission rules are matched against, for one simple command.

Allow rules see the command with its safe ``VAR=`` prefixes and plain wrappers
(``timeout 5``, ``nice``) stripped; deny and ask rules see every form a command could take
(every prefix and wrapper stripped, unquoted, the program's basename, ``find -exec``'s
command, git without its global options), so that no spelling walks past them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from toolrun.permissions.programs import git
from toolrun.permissions.programs.streams import is_stream
from toolrun.permissions.words import Word

MAX_DENY_FORMS = 48
_ASSIGNMENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_DURATION = re.compile(r"\d+(\.\d+)?[smhd]?")

#: Wrapper commands stripped before matching (for every rule behaviour).
WRAPPERS = frozenset({"timeout", "time", "nice", "nohup", "stdbuf", "command", "builtin", "xargs"})
#: Extra commands that run their arguments as a command: stripped for deny/ask only.
DENY_ONLY_WRAPPERS = frozenset(
    {
        "env",
        "sudo",
        "doas",
        "exec",
        "coproc",
        "setsid",
        "watch",
        "ionice",
        "flock",
        "chrt",
        "taskset",
        "unbuffer",
        "nocorrect",
        "noglob",
        "caffeinate",
        "chroot",
        "runuser",
        "su",
        # Programs that run the command in their arguments (anthropics/claude-code#92542:
        # a wrapper outside the list shifts the program name past every deny rule).
        "strace", "ltrace", "valgrind", "fakeroot", "faketime", "torsocks", "proxychains",
        "proxychains4", "firejail", "unshare", "nsenter", "systemd-run", "chronic",
        "catchsegv", "dbus-run-session", "dbus-launch", "xvfb-run", "pkexec", "sg",
        "busybox", "toybox", "ssh-agent", "perf", "entr", "npx", "bunx", "pnpx", "uv", "uvx",
        "poetry", "pipenv", "pdm", "hatch", "conda", "mamba", "bundle", "direnv", "mise",
        "asdf", "devbox", "pixi", "rye", "scl", "prlimit", "cpulimit", "numactl",
        "setpriv", "capsh", "chpst", "daemonize", "start-stop-daemon", "trickle", "tsocks",
        "eatmydata", "nocache", "linux32", "linux64", "setarch", "gtimeout", "gstdbuf",
    }
)
ANY_WRAPPER = WRAPPERS | DENY_ONLY_WRAPPERS
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"})
#: ``VAR=value`` prefixes that allow rules strip (they do not change which code runs).
SAFE_ENV_VARS = frozenset(
    {
        "CI",
        "NODE_ENV",
        "RUST_LOG",
        "RUST_BACKTRACE",
        "LANG",
        "LANGUAGE",
        "LC_ALL",
        "LC_CTYPE",
        "LC_MESSAGES",
        "TZ",
        "TERM",
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "GOOS",
        "GOARCH",
        "CGO_ENABLED",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "DEBUG",
        "VERBOSE",
    }
)


def is_assignment_word(word: Word) -> bool:
    return word.value is not None and _ASSIGNMENT_WORD.match(word.value) is not None



def strip_wrapper(words: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """The wrapped command when ``words`` starts with a known wrapper and its usual options."""
    if len(words) < 2 or not words[0].is_static:
        return None
    name = words[0].value
    if name not in WRAPPERS:
        return None  # (most commands: the branches below are for the wrappers only)
    rest = list(words[1:])

    def value(i: int) -> str:
        # A word only known at run time never looks like an option or a duration.
        v = rest[i].value
        return v if v is not None and not rest[i].glob else "\x00"

    i = 0
    if name == "timeout":
        while i < len(rest) and value(i).startswith("-"):
            opt = value(i)
            if opt in ("-s", "-k", "--signal", "--kill-after"):
                i += 2
            elif opt in ("--preserve-status", "--foreground", "-v", "--verbose", "--") or (
                opt.startswith(("--signal=", "--kill-after=", "-s", "-k"))
            ):
                i += 1
                if opt == "--":
                    break
            else:
                return None
        if i >= len(rest) or not _DURATION.fullmatch(value(i)):
            return None
        i += 1
    elif name == "time":
        while i < len(rest) and value(i) in ("-p", "--portability", "--"):
            i += 1
    elif name == "nice":
        if i < len(rest) and value(i) in ("-n", "--adjustment"):
            i += 2
        elif i < len(rest) and re.fullmatch(r"-n?-?\d+|--adjustment=-?\d+", value(i)):
            i += 1
    elif name == "nohup":
        if i < len(rest) and value(i) == "--":
            i += 1
    elif name == "stdbuf":
        while i < len(rest) and value(i).startswith("-"):
            opt = value(i)
            if opt in ("-i", "-o", "-e"):
                i += 2
            elif re.fullmatch(r"-[ioe].+|--(input|output|error)=.+", opt):
                i += 1
            elif opt == "--":
                i += 1
                break
            else:
                return None
    elif name == "command":
        if i < len(rest) and value(i) == "-p":
            i += 1
        if i < len(rest) and value(i).startswith("-"):
            return None  # command -v / -V look a name up: not a wrapper
    elif name == "builtin":
        pass
    elif name == "xargs":
        if value(0).startswith("-"):
            return None  # only bare xargs is stripped
    else:
        return None
    remaining = tuple(rest[i:])
    return remaining or None


def _strip_for_allow(
    assignments: tuple[Word, ...], words: tuple[Word, ...]
) -> tuple[tuple[str, ...], tuple[Word, ...]]:
    """(unsafe assignments kept, argv) after stripping safe ``VAR=`` and wrappers."""
    unsafe = tuple(
        a.raw
        for a in assignments
        if a.value is None or a.value.split("=", 1)[0] not in SAFE_ENV_VARS
    )
    current = words
    for _ in range(8):
        stripped = strip_wrapper(current)
        if stripped is None:
            break
        current = stripped
    return unsafe, current


def _deny_variants(words: tuple[Word, ...], depth: int = 0) -> list[tuple[Word, ...]]:
    """Every argv a deny/ask rule should see: prefixes and wrappers stripped, to a fixed point."""
    variants: list[tuple[Word, ...]] = [words]
    current = words
    while current and is_assignment_word(current[0]):
        current = current[1:]
        variants.append(current)
    stripped = strip_wrapper(current) if current else None
    if stripped is not None:
        variants.extend(_deny_variants(stripped, depth + 1) if depth < 8 else [stripped])
    elif current and depth < 8:
        first = current[0].text
        if posixpath.basename(first) in ANY_WRAPPER:
            # Unknown wrapper options: every later word could be the command.
            for j in range(1, len(current)):
                text = current[j].text
                if text.startswith("-") or is_assignment_word(current[j]):
                    continue
                variants.extend(_deny_variants(current[j:], depth + 4))
                if len(variants) > MAX_DENY_FORMS:
                    break
    return [v for v in variants if v]


def _exec_argvs(words: tuple[Word, ...]) -> list[tuple[Word, ...]]:
    """Commands run by ``find ... -exec CMD ;`` (and -execdir/-ok/-okdir)."""
    out: list[tuple[Word, ...]] = []
    i = 0
    while i < len(words):
        if words[i].text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(words) and words[j].text not in (";", "+"):
                j += 1
            if j > i + 1:
                out.append(words[i + 1 : j])
            i = j
        i += 1
    return out


def _forms(argv: tuple[Word, ...]) -> list[str]:
    raw = " ".join(w.raw for w in argv)
    unquoted = " ".join(w.text for w in argv)
    forms = [raw, unquoted]
    first = argv[0].text
    if argv[0].is_static and "/" in first:
        base = posixpath.basename(first)
        if base:
            forms.append(" ".join([base, *(w.text for w in argv[1:])]))
    return forms


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def command_forms(
    assignments: tuple[Word, ...], words: tuple[Word, ...], *, analysable: bool
) -> tuple[
    tuple[Word, ...], tuple[str, ...], str | None, tuple[str, ...], tuple[tuple[Word, ...], ...]
]:
    """(effective argv, unsafe env, allow form, deny forms, deny argvs) of one command."""
    unsafe, effective = _strip_for_allow(assignments, words)
    allow_form: str | None = None
    if analysable and effective and effective[0].is_static:
        allow_form = " ".join([*unsafe, *(w.raw for w in effective)])
    deny: list[str] = []
    argvs: list[tuple[Word, ...]] = []
    full = assignments + words
    for variant in _deny_variants(full):
        argvs.append(variant)
        if variant and posixpath.basename(variant[0].text) == "git":
            # Deny and ask rules see through git's global options (never allow rules):
            # `git -C . --no-pager push` is still `git push`.
            bare = git.strip_globals(variant)
            if bare is not None:
                argvs.append(bare)
        if variant and variant[0].text == "find":
            for inner in _exec_argvs(variant):
                argvs.extend(_deny_variants(inner))
    for argv in argvs:
        deny.extend(_forms(argv))
    return effective, unsafe, allow_form, _dedupe(deny)[: MAX_DENY_FORMS * 2], tuple(argvs)



def shell_script(argv: tuple[Word, ...]) -> tuple[bool, Word | None]:
    """(is a shell running a string or stdin, the -c script word if any)."""
    if not argv or posixpath.basename(argv[0].text) not in SHELLS:
        return False, None
    args = argv[1:]
    if argv[0].text.endswith("busybox"):
        if not args or posixpath.basename(args[0].text) not in SHELLS:
            return False, None
        args = args[1:]
    saw_c = False
    value_next = False
    for word in args:
        text = word.text
        if value_next:  # (`-O extglob`, `+o posix`, `--rcfile F`: a value, not the script)
            value_next = False
            continue
        if text == "--":
            continue
        if text.startswith(("-", "+")) and len(text) > 1:
            if not text.startswith("--") and "c" in text[1:]:
                saw_c = True
            value_next = text in ("--rcfile", "--init-file") or (
                not text.startswith("--") and text[-1] in "oO"
            )
            continue
        if saw_c:
            return True, word
        if is_stream(word):
            return True, None  # `bash /dev/stdin <<< ...`, `bash <(...)`: a fed-in string
        return False, None  # `bash script.sh`: runs a file, like any command
    # No script argument: the shell reads commands from stdin (or -c with nothing).
    return True, None
