"""Bash command analysis with tree-sitter-bash: parse, split, strip.

:func:`analyse` turns a command string into the list of simple commands that
would run (including those inside ``$(...)``, backticks and ``<(...)``), each
with its redirections and the strings that permission rules are matched
against. Results are cached: the same command string is parsed once.

Fail closed: anything toolrun does not understand (a parse error, ``eval``,
``sh -c`` strings, control flow, a dynamic command name, an unknown node type)
is recorded in :attr:`BashAnalysis.problems`; such a command can never be
allowed by a rule. Simple commands found inside such constructs are still
listed (``analysable=False``) so that deny and ask rules see them.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from toolrun.permissions import envcode, expansions, fidelity, programs, shellstate
from toolrun.permissions.bash_simple import simple_commands
from toolrun.permissions.braces import brace_expands
from toolrun.permissions.frozen import fast_init
from toolrun.permissions.programs import git
from toolrun.permissions.programs.streams import is_stream
from toolrun.permissions.words import Word as Word  # noqa: PLC0414 (re-exported for callers)

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_COMMAND_LENGTH = 10_000
MAX_NESTING = 4
MAX_DENY_FORMS = 48

CommandKind = Literal["command", "assignment", "declaration", "unset", "test", "redirects"]

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
_ANY_WRAPPER = WRAPPERS | DENY_ONLY_WRAPPERS
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

_SEPARATORS = frozenset({"&&", "||", ";", "&", "\n"})
_PIPES = frozenset({"|", "|&"})
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|"})
#: What gives a command its standard input: a file, a descriptor, a here-string, a
#: here-doc, or (``|``, recorded as a redirect without target) the pipe before it.
_STDIN_OPS = frozenset({"<", "<&", "<>", "<<<", "<<", "<<-", "|", "|&"})
_ARG_TYPES = frozenset(
    {
        "word",
        "string",
        "string_content",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "number",
        "concatenation",
        "simple_expansion",
        "expansion",
        "variable_name",
        "special_variable_name",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
    }
)
# Nodes whose inside is data or arithmetic: only substitutions in them matter.
_OPAQUE_ARGS = frozenset({"expansion", "arithmetic_expansion", "brace_expression"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_GLOB_CHARS = frozenset("*?[")
_ASSIGNMENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_DURATION = re.compile(r"\d+(\.\d+)?[smhd]?")
_CONTINUATION_IN_WORD = re.compile(r"[^\s]\\\n")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@fast_init
@dataclass(frozen=True, slots=True)
class Redirect:
    op: str
    target: Word | None
    fd: str | None = None

    @property
    def writes(self) -> bool:
        if self.target is None:
            return False
        if self.op in _WRITE_OPS:
            return True
        # ``>& file`` (not ``>&2``/``>&-``) writes to a file.
        return self.op == ">&" and not self._duplicates

    @property
    def reads(self) -> bool:
        """``< file``, ``0< file``, ``<& file`` (not ``<&3``): the target is read."""
        if self.target is None:
            return False
        return self.op == "<" or (self.op == "<&" and not self._duplicates)

    @property
    def feeds_stdin(self) -> bool:
        """Whether this gives the command its standard input (what ``perl`` with no script
        runs: ``<<< CODE``, ``<<EOF``, ``< file``, a pipe)."""
        return self.op in _STDIN_OPS and self.fd in (None, "0")

    @property
    def network(self) -> bool:
        """``/dev/tcp/HOST/PORT`` and ``/dev/udp/...``: bash opens a connection."""
        if self.target is None:
            return False
        text = self.target.text
        return "/dev/tcp" in text or "/dev/udp" in text

    @property
    def _duplicates(self) -> bool:
        value = self.target.value if self.target is not None else None
        return value is not None and (value.isdigit() or value == "-")


@fast_init
@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command that would run, with what rules are matched against.

    ``allow_form`` is the string allow rules see (safe ``VAR=`` prefixes and
    wrappers stripped) or None when no allow rule may match it; ``deny_forms``
    are all the strings deny and ask rules see (every prefix and wrapper
    stripped, unquoted, basename of the command, ...).
    """

    text: str
    kind: CommandKind
    assignments: tuple[Word, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    context: str
    top_level: bool
    analysable: bool
    effective: tuple[Word, ...]
    unsafe_env: tuple[str, ...]
    allow_form: str | None
    deny_forms: tuple[str, ...]
    nested_argvs: tuple[tuple[Word, ...], ...] = ()
    #: Every argv deny/ask rules consider (wrappers and prefixes stripped, find -exec).
    argvs: tuple[tuple[Word, ...], ...] = ()

    #: The command name after stripping wrappers (None when dynamic); set from ``effective``.
    name: str | None = field(init=False, compare=False)

    def __post_init__(self) -> None:
        first = self.effective[0] if self.effective else None
        name = first.value if first is not None and first.is_static else None
        object.__setattr__(self, "name", name)  # computed once: read many times per decision


#: The standard input a pipe gives every command after ``|`` (a redirect with no target).
PIPED = Redirect("|", None)


@dataclass(frozen=True, slots=True)
class BashAnalysis:
    command: str
    commands: tuple[SimpleCommand, ...]
    problems: tuple[str, ...]

    @property
    def analysable(self) -> bool:
        return not self.problems


# --------------------------------------------------------------------------- parser


@functools.cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def _text(node: Node) -> str:
    data = node.text
    return data.decode("utf-8", "replace") if data is not None else ""


# --------------------------------------------------------------------------- words


def _unescape_unquoted(raw: str) -> tuple[str, bool]:
    """Backslash removal for an unquoted word; also reports unescaped glob characters."""
    if "\\" not in raw:
        return raw, not _GLOB_CHARS.isdisjoint(raw)
    out: list[str] = []
    glob = False
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        if c in _GLOB_CHARS:
            glob = True
        out.append(c)
        i += 1
    return "".join(out), glob


def _unescape_double(raw: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw) and raw[i + 1] in '\\"$`\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _evaluate(node: Node) -> tuple[str | None, bool, bool]:
    """(value, glob, brace) of a word-like node; value None when it depends on expansion."""
    kind = node.type
    if kind == "word":
        value, glob = _unescape_unquoted(_text(node))
        return value, glob, False
    if kind == "number":
        return _text(node), False, False
    if kind == "raw_string":
        return _text(node)[1:-1], False, False
    if kind == "brace_expression":  # `{1..3}`: braces.brace_expands decides on the word
        return _text(node), False, True
    if kind == "string":
        for child in node.named_children:
            if child.type != "string_content":
                return None, False, False
        # From the source, not the children: the parser drops newlines between them.
        return _unescape_double(_text(node)[1:-1]), False, False
    if kind == "concatenation":
        values: list[str] = []
        glob = brace = False
        children = node.named_children
        for child in children:
            part, child_glob, child_brace = _evaluate(child)
            if part is None:
                return None, False, False
            glob = glob or child_glob
            brace = brace or child_brace or (child.type == "word" and _text(child) == "{")
            values.append(part)
        return "".join(values), glob, brace
    return None, False, False


def _make_word(node: Node) -> Word:
    raw = _text(node)
    value, glob, _brace = _evaluate(node)
    # Only a brace with a comma or a sequence expands (`HEAD^{tree}` is literal).
    if value is not None and "{" in raw and brace_expands(raw):
        value = None
    # Bash expands a tilde prefix only when no character of it is quoted.
    prefix = raw.split("/", 1)[0]
    tilde = raw.startswith("~") and not any(c in prefix for c in "'\"\\$`")
    return Word(raw, value, glob, tilde)


# --------------------------------------------------------------------------- stripping


def _is_assignment_word(word: Word) -> bool:
    return word.value is not None and _ASSIGNMENT_WORD.match(word.value) is not None


def _static(words: Iterable[Word]) -> bool:
    return all(w.value is not None for w in words)


def _strip_wrapper(words: tuple[Word, ...]) -> tuple[Word, ...] | None:
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
        stripped = _strip_wrapper(current)
        if stripped is None:
            break
        current = stripped
    return unsafe, current


def _deny_variants(words: tuple[Word, ...], depth: int = 0) -> list[tuple[Word, ...]]:
    """Every argv a deny/ask rule should see: prefixes and wrappers stripped, to a fixed point."""
    variants: list[tuple[Word, ...]] = [words]
    current = words
    while current and _is_assignment_word(current[0]):
        current = current[1:]
        variants.append(current)
    stripped = _strip_wrapper(current) if current else None
    if stripped is not None:
        variants.extend(_deny_variants(stripped, depth + 1) if depth < 8 else [stripped])
    elif current and depth < 8:
        first = current[0].text
        if posixpath.basename(first) in _ANY_WRAPPER:
            # Unknown wrapper options: every later word could be the command.
            for j in range(1, len(current)):
                text = current[j].text
                if text.startswith("-") or _is_assignment_word(current[j]):
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


# --------------------------------------------------------------------------- walking


def _shell_script(argv: tuple[Word, ...]) -> tuple[bool, Word | None]:
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


class _Walker:
    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.commands: list[SimpleCommand] = []
        self.problems: list[str] = []
        #: Redirections of the groups (``{ ...; }``, ``( ... )``) and pipes being walked:
        #: they apply to every command inside, substitutions too (which share stdin).
        self.spread: tuple[Redirect, ...] = ()

    def problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)

    # statements ----------------------------------------------------------------

    def statement(
        self,
        node: Node,
        context: str,
        top: bool,
        analysable: bool,
        extra_redirects: tuple[Redirect, ...] = (),
    ) -> None:
        kind = node.type
        if kind in ("program", "list", "pipeline"):
            # tree-sitter-bash hangs a trailing redirection (`a && b > f`) on the whole
            # list; bash binds it to the last command, and so do we.
            named = [c for c in node.children if c.is_named and c.type != "comment"]
            last = named[-1] if named else None
            allowed = _PIPES if kind == "pipeline" else _SEPARATORS
            piped = False  # (a command after `|` reads the pipe, whatever its own redirects)
            for child in node.children:
                if child.is_named:
                    saved = self.spread
                    if piped:
                        self.spread = (*saved, PIPED)
                    self.statement(
                        child,
                        context,
                        top and kind != "pipeline",
                        analysable,
                        extra_redirects if child == last else (),
                    )
                    self.spread = saved
                elif child.type not in allowed:
                    self.problem(f"unsupported shell operator {child.type!r}")
                    analysable = False
                else:
                    piped = piped or child.type in _PIPES
        elif kind in ("subshell", "compound_statement"):
            # `( ... )` runs in a child shell, `{ ...; }` in this one (a `cd` there moves
            # it); either way the group's redirections reach every command inside.
            self.group(node, context, top and kind == "compound_statement", analysable,
                       extra_redirects)
        elif kind == "negated_command":
            for child in node.named_children:
                self.statement(child, context, top, analysable, extra_redirects)
        elif kind == "redirected_statement":
            self.redirected(node, context, top, analysable, extra_redirects)
        elif kind == "command":
            self.command(node, context, top, analysable, extra_redirects)
        elif kind in ("declaration_command", "unset_command"):
            self.keyword_command(node, context, top, analysable, extra_redirects)
        elif kind == "test_command":
            self.test_command(node, context, top, analysable, extra_redirects)
        elif kind in ("variable_assignment", "variable_assignments"):
            self.bare_assignment(node, context, top, analysable, extra_redirects)
        elif kind == "comment":
            pass
        elif kind == "ERROR":
            self.problem("the command does not parse as shell")
            self.descend(node, context, False)
        else:
            self.problem(f"unsupported shell construct: {kind}")
            self.descend(node, kind, False)

    def group(
        self,
        node: Node,
        context: str,
        top: bool,
        analysable: bool,
        redirects: tuple[Redirect, ...],
    ) -> None:
        saved = self.spread
        self.spread = (*saved, *redirects)
        for child in node.named_children:
            if child.type in _REDIRECTS:
                continue  # (the group's own, given in `redirects` by the caller)
            self.statement(child, context, top, analysable)
        self.spread = saved

    def descend(self, node: Node, context: str, analysable: bool) -> None:
        """Find statements anywhere below an unsupported node, for deny and ask rules."""
        for child in node.named_children:
            if child.type in _STATEMENTS:
                self.statement(child, context, False, analysable)
            elif child.type in _SUBSTITUTIONS:
                self.substitution(child, analysable)
            else:
                self.descend(child, context, analysable)

    def redirected(
        self,
        node: Node,
        context: str,
        top: bool,
        analysable: bool,
        extra_redirects: tuple[Redirect, ...] = (),
    ) -> None:
        redirects: list[Redirect] = list(extra_redirects)
        body: Node | None = None
        for child in node.named_children:
            if child.type in _REDIRECTS:
                redirects.extend(self.redirect(child, analysable))
            elif body is None:
                body = child
            else:
                self.problem(f"unsupported shell construct: {child.type}")
        if body is not None and body.type in (
            "list",
            "pipeline",
            "negated_command",
            "command",
            "declaration_command",
            "unset_command",
            "test_command",
            "variable_assignment",
            "variable_assignments",
        ):
            self.statement(body, context, top, analysable, tuple(redirects))
            return
        if body is not None and body.type in ("subshell", "compound_statement"):
            self.group(body, context, top and body.type == "compound_statement", analysable,
                       tuple(redirects))
            return
        if body is not None:
            self.statement(body, context, False, analysable)
        if redirects:
            self.add(
                _text(node),
                "redirects",
                (),
                (),
                tuple(redirects),
                context,
                top,
                analysable,
            )

    def redirect(self, node: Node, analysable: bool) -> list[Redirect]:
        out: list[Redirect] = []
        if node.type == "heredoc_redirect":
            for child in node.named_children:
                if child.type == "file_redirect":
                    out.extend(self.redirect(child, analysable))
                elif child.type == "heredoc_body":
                    self.scan(child, analysable, opaque=True)
                elif child.type in _STATEMENTS:
                    # `cat <<EOF | rm x` / `&& rm x`: the rest of the line hangs here.
                    self.statement(child, "", False, analysable)
                elif child.type not in ("heredoc_start", "heredoc_end"):
                    self.problem(f"unsupported shell construct in a heredoc: {child.type}")
            for child in node.children:
                if not child.is_named and child.type not in ("<<", "<<-", *_SEPARATORS, *_PIPES):
                    self.problem(f"unsupported shell operator {child.type!r}")
            out.append(Redirect("<<", None))  # (the body is the command's stdin)
            return out
        if node.type == "herestring_redirect":
            for child in node.named_children:
                self.argument(child, analysable)
            out.append(Redirect("<<<", None))
            return out
        fd: str | None = None
        op = ""
        target: Word | None = None
        for child in node.children:
            if child.type == "file_descriptor":
                fd = _text(child)
            elif not child.is_named:
                op = child.type
            else:
                self.argument(child, analysable)
                target = _make_word(child)
        out.append(Redirect(op, target, fd))
        return out

    def command(
        self,
        node: Node,
        context: str,
        top: bool,
        analysable: bool,
        extra_redirects: tuple[Redirect, ...],
    ) -> None:
        assignments: list[Word] = []
        words: list[Word] = []
        redirects: list[Redirect] = list(extra_redirects)
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                self.scan(child, analysable, opaque=True)
                assignments.append(_make_assignment(child))
            elif kind in _REDIRECTS:
                redirects.extend(self.redirect(child, analysable))
            elif kind == "command_name":
                for name_part in child.named_children:
                    self.argument(name_part, analysable)
                parts = child.named_children
                words.append(_make_word(parts[0]) if parts else Word(_text(child), None))
            elif kind == "comment":
                continue
            else:
                self.argument(child, analysable)
                words.append(_make_word(child))
        if words and not words[0].is_static:
            self.problem(f"the command name {words[0].raw!r} is computed at run time")
            analysable = False
        elif words and words[0].raw in _RESERVED_WORDS:
            # `! ! cmd`: tree-sitter reads the second `!` as a program; bash does not.
            self.problem(f"the reserved word {words[0].raw!r} stands where a command "
                         "name is: bash reads it differently")
            analysable = False
        self.add(
            _text(node), "command", tuple(assignments), tuple(words), tuple(redirects),
            context, top, analysable,
        )

    def keyword_command(
        self,
        node: Node,
        context: str,
        top: bool,
        analysable: bool,
        extra_redirects: tuple[Redirect, ...],
    ) -> None:
        words: list[Word] = []
        for child in node.children:
            if not child.is_named:
                words.append(Word(child.type, child.type))
            else:
                self.scan(child, analysable, opaque=True)
                if child.type == "variable_assignment":
                    words.append(_make_assignment(child))
                else:
                    words.append(_make_word(child))
        kind: CommandKind = "declaration" if node.type == "declaration_command" else "unset"
        why = programs.runs_code(tuple(words)) if words else None
        if why is not None:
            self.problem(why)
            analysable = False
        self.add(_text(node), kind, (), tuple(words), extra_redirects, context, top, analysable)

    def test_command(
        self,
        node: Node,
        context: str,
        top: bool,
        analysable: bool,
        extra_redirects: tuple[Redirect, ...],
    ) -> None:
        self.scan(node, analysable, opaque=True)
        text = _text(node)
        why = expansions.conditional_problem(text)
        if why is not None:
            self.problem(why)
        words = (Word(text, text),)
        self.add(text, "test", (), words, extra_redirects, context, top, analysable)

    def bare_assignment(
        self,
        node: Node,
        context: str,
        top: bool,
        analysable: bool,
        extra_redirects: tuple[Redirect, ...],
    ) -> None:
        parts = [node] if node.type == "variable_assignment" else list(node.named_children)
        assignments: list[Word] = []
        for part in parts:
            self.scan(part, analysable, opaque=True)
            assignments.append(_make_assignment(part))
        self.add(
            _text(node), "assignment", tuple(assignments), (), extra_redirects,
            context, top, analysable,
        )

    # arguments -------------------------------------------------------------------

    def argument(self, node: Node, analysable: bool) -> None:
        if node.type not in _ARG_TYPES:
            self.problem(f"unsupported shell construct in an argument: {node.type}")
        self.scan(node, analysable, opaque=node.type in _OPAQUE_ARGS)

    def scan(self, node: Node, analysable: bool, *, opaque: bool) -> None:
        """Walk a word-level node: pull out substitutions, reject unknown node types."""
        if node.type in _SUBSTITUTIONS:
            self.substitution(node, analysable)
            return
        if node.type == "ERROR":
            self.problem("the command does not parse as shell")
        audit = _AUDITS.get(node.type)
        if audit is not None:
            why = audit(_text(node))
            if why is not None:
                self.problem(why)
        for child in node.named_children:
            if child.type in _SUBSTITUTIONS:
                self.substitution(child, analysable)
            elif opaque or child.type in _OPAQUE_ARGS:
                self.scan(child, analysable, opaque=True)
            else:
                if child.type not in _ARG_TYPES:
                    self.problem(f"unsupported shell construct in an argument: {child.type}")
                self.scan(child, analysable, opaque=False)

    def substitution(self, node: Node, analysable: bool) -> None:
        opener = node.children[0].type if node.children else "$("
        label = {"$(": "$(...)", "`": "`...`", "<(": "<(...)", ">(": ">(...)"}.get(opener, opener)
        for child in node.named_children:
            self.statement(child, label, False, analysable)

    # results ---------------------------------------------------------------------

    def add(
        self,
        text: str,
        kind: CommandKind,
        assignments: tuple[Word, ...],
        words: tuple[Word, ...],
        redirects: tuple[Redirect, ...],
        context: str,
        top: bool,
        analysable: bool,
    ) -> None:
        effective, unsafe, allow_form, deny_forms, argvs = command_forms(
            assignments, words, analysable=analysable
        )
        nested: list[tuple[Word, ...]] = []
        if self.spread:
            redirects = (*self.spread, *redirects)
        # `GIT_PAGER='rm f' git -p log`, `export LESSOPEN='|cmd'`: code in the environment
        env_code = envcode.problem(kind, assignments, words, argvs)
        if env_code is not None:
            self.problem(env_code)
            analysable = False
            allow_form = None
        if kind == "command" and words:
            for argv in argvs:
                if argv and not argv[0].is_static:
                    # `command ${M:-rm}`, `env $(echo rm)`: behind a wrapper, still a name.
                    self.problem(f"the command name {argv[0].raw!r} is computed at run time")
                    analysable = False
                    break
            stdin = any(r.feeds_stdin for r in redirects)
            analysable = self.nested_scripts(argvs, analysable, nested, stdin)
            if not analysable:
                allow_form = None
        if kind in ("redirects", "assignment", "declaration", "unset", "test"):
            allow_form = " ".join(w.raw for w in assignments + words) if analysable else None
        self.commands.append(
            SimpleCommand(
                text=text,
                kind=kind,
                assignments=assignments,
                words=words,
                redirects=redirects,
                context=context,
                top_level=top and not context,
                analysable=analysable,
                effective=effective,
                unsafe_env=unsafe,
                allow_form=allow_form,
                deny_forms=deny_forms,
                nested_argvs=tuple(nested),
                argvs=argvs,
            )
        )

    def nested_scripts(
        self,
        argvs: Iterable[tuple[Word, ...]],
        analysable: bool,
        nested: list[tuple[Word, ...]],
        stdin: bool = False,
    ) -> bool:
        """Detect code given as a string (``eval``, ``sh -c``, ``awk 'BEGIN{system(..)}'``,
        ``python -c``, ``trap``) or fed in (``perl <<< CODE``, ``cat x | node``, ``make -f
        /dev/stdin``; ``stdin``: the command's standard input is given by the command
        itself): never allowable; shell strings are checked for deny."""
        scripts: list[str] = []
        for variant in argvs:
            if not variant:
                continue
            name = posixpath.basename(variant[0].text)
            inline = programs.runs_code(variant) if variant[0].is_static else None
            if inline is None and variant[0].is_static:
                inline = programs.reads_program(variant, stdin)
            if inline is not None:
                self.problem(inline)
                analysable = False
            if name == "eval":
                self.problem("eval runs a string as a command")
                analysable = False
                if _static(variant[1:]):
                    scripts.append(" ".join(w.text for w in variant[1:]))
                continue
            is_shell, script = _shell_script(variant)
            if is_shell:
                analysable = False
                if script is None:
                    self.problem(f"{name} reads its commands from standard input")
                else:
                    self.problem(f"{name} -c runs a string as a command")
                    if script.value is not None:
                        scripts.append(script.value)
        for text in dict.fromkeys(scripts):
            if self.depth >= MAX_NESTING:
                self.problem("shell strings nested too deeply")
                continue
            inner = _analyse(text, self.depth + 1)
            for command in inner.commands:
                self.commands.append(_mark_unanalysable(command, "sh -c"))
                nested.append(command.words)
        return analysable


#: Reserved words: unquoted, they are never a command name for bash.
_RESERVED_WORDS = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "case", "esac", "for", "select",
     "while", "until", "do", "done", "in", "function", "[[", "]]", "coproc"}
)  # fmt: skip

_AUDITS = {
    "expansion": expansions.expansion_problem,
    "arithmetic_expansion": expansions.arithmetic_problem,
}

_STATEMENTS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "negated_command",
        "redirected_statement",
        "command",
        "declaration_command",
        "unset_command",
        "test_command",
        "variable_assignment",
        "variable_assignments",
    }
)


def _make_assignment(node: Node) -> Word:
    raw = _text(node)
    children = node.named_children
    value_node = children[-1] if len(children) >= 2 else None
    name = _text(children[0]) if children else raw.split("=", 1)[0]
    if value_node is None:
        return Word(raw, raw if raw.endswith("=") else None)
    value, _glob, brace = _evaluate(value_node)
    if value is None or brace or value_node.type == "array":
        return Word(raw, None)
    op = "+=" if raw[len(name) :].startswith("+=") else "="
    return Word(raw, f"{name}{op}{value}")


def _mark_unanalysable(command: SimpleCommand, context: str) -> SimpleCommand:
    return SimpleCommand(
        text=command.text,
        kind=command.kind,
        assignments=command.assignments,
        words=command.words,
        redirects=command.redirects,
        context=f"{context} {command.context}".strip() if command.context else context,
        top_level=False,
        analysable=False,
        effective=command.effective,
        unsafe_env=command.unsafe_env,
        allow_form=None,
        deny_forms=command.deny_forms,
        nested_argvs=command.nested_argvs,
        argvs=command.argvs,
    )


def _analyse(command: str, depth: int) -> BashAnalysis:
    walker = _Walker(depth)
    if len(command) > MAX_COMMAND_LENGTH:
        walker.problem(f"the command is longer than {MAX_COMMAND_LENGTH:,} characters")
    if _CONTROL.search(command):
        walker.problem("the command contains control characters")
    if _CONTINUATION_IN_WORD.search(command):
        walker.problem("a line continuation joins parts of a word")
    if not walker.problems:
        simple = simple_commands(command)  # plain words and operators: no parse needed
        if simple is not None:
            for text, top, assignments, words, piped in simple:
                walker.add(text, "command", assignments, words, (PIPED,) if piped else (),
                           "", top, True)
            return _finish(command, walker)
    if "\\\n" in command and depth < MAX_NESTING:
        # Bash drops backslash-newline before splitting words; deny rules see that too.
        joined = _analyse(command.replace("\\\n", ""), depth + 1)
        walker.commands.extend(_mark_unanalysable(c, "joined lines") for c in joined.commands)
    source = command.encode("utf-8", "surrogatepass")
    root = _parser().parse(source).root_node
    if root.has_error:
        walker.problem("the command does not parse as shell")
    for problem in fidelity.problems(root, source):
        walker.problem(problem)
    walker.statement(root, "", True, True)
    if not command.strip():
        walker.problem("empty command")
    return _finish(command, walker)


def _finish(command: str, walker: _Walker) -> BashAnalysis:
    """The analysis, with the shell state each command leaves for the next followed
    (variables set on their own) or refused (``shopt``, ``set -f``, ``IFS=``...)."""
    commands = walker.commands
    if any(c.kind in ("assignment", "declaration") for c in commands):
        commands = shellstate.inherit(commands, SAFE_ENV_VARS)
    for problem in shellstate.problems(command, commands):
        walker.problem(problem)
    return BashAnalysis(command, tuple(commands), tuple(walker.problems))


@functools.lru_cache(maxsize=8192)
def analyse(command: str) -> BashAnalysis:
    """Parse and split a Bash command (cached)."""
    return _analyse(command, 0)
