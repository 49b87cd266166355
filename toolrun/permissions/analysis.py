"""What an analysed Bash command is: its simple commands, their words and redirects.

The analyser (:mod:`toolrun.permissions.bash`) builds these; the rules, the read-only
check, the resolver and the programs' knowledge read them. Kept apart from the analyser
so that what reads a command never depends on how it was parsed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from toolrun.dataclass_init import fast_init
from toolrun.permissions.words import Word

CommandKind = Literal["command", "assignment", "declaration", "unset", "test", "redirects"]

WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|"})
#: What gives a command its standard input: a file, a descriptor, a here-string, a
#: here-doc, or (``|``, recorded as a redirect without target) the pipe before it.
STDIN_OPS = frozenset({"<", "<&", "<>", "<<<", "<<", "<<-", "|", "|&"})


@fast_init
@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection of a simple command: its operator, target word and descriptor."""

    op: str
    target: Word | None
    fd: str | None = None

    @property
    def writes(self) -> bool:
        if self.target is None:
            return False
        if self.op in WRITE_OPS:
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
        return self.op in STDIN_OPS and self.fd in (None, "0")

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
    """A whole Bash command analysed: its simple commands, and what keeps it from being
    analysed (``problems``: then no rule may allow it)."""

    command: str
    commands: tuple[SimpleCommand, ...]
    problems: tuple[str, ...]

    @property
    def analysable(self) -> bool:
        return not self.problems
