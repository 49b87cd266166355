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

Kept in one module: the walk of the tree-sitter tree is one family of mutually
recursive functions over the node kinds; its word, form, fidelity and shell-state parts
already live beside it (treewords.py, forms.py, fidelity.py, shellstate.py).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from toolrun.permissions import envcode, expansions, fidelity, programs, shellstate
from toolrun.permissions.analysis import PIPED, BashAnalysis, CommandKind, Redirect, SimpleCommand
from toolrun.permissions.bash_simple import simple_commands
from toolrun.permissions.forms import SAFE_ENV_VARS, command_forms, shell_script
from toolrun.permissions.treewords import evaluate, make_word, node_text, parser
from toolrun.permissions.words import Word as Word  # noqa: PLC0414 (re-exported for callers)

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_COMMAND_LENGTH = 10_000
MAX_NESTING = 4


_SEPARATORS = frozenset({"&&", "||", ";", "&", "\n"})
_PIPES = frozenset({"|", "|&"})
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
_CONTINUATION_IN_WORD = re.compile(r"[^\s]\\\n")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


# --------------------------------------------------------------------------- stripping


def _static(words: Iterable[Word]) -> bool:
    return all(w.value is not None for w in words)


# --------------------------------------------------------------------------- walking


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
                node_text(node),
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
                fd = node_text(child)
            elif not child.is_named:
                op = child.type
            else:
                self.argument(child, analysable)
                target = make_word(child)
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
                words.append(make_word(parts[0]) if parts else Word(node_text(child), None))
            elif kind == "comment":
                continue
            else:
                self.argument(child, analysable)
                words.append(make_word(child))
        if words and not words[0].is_static:
            self.problem(f"the command name {words[0].raw!r} is computed at run time")
            analysable = False
        elif words and words[0].raw in _RESERVED_WORDS:
            # `! ! cmd`: tree-sitter reads the second `!` as a program; bash does not.
            self.problem(f"the reserved word {words[0].raw!r} stands where a command "
                         "name is: bash reads it differently")
            analysable = False
        self.add(
            node_text(node), "command", tuple(assignments), tuple(words), tuple(redirects),
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
                    words.append(make_word(child))
        kind: CommandKind = "declaration" if node.type == "declaration_command" else "unset"
        why = programs.runs_code(tuple(words)) if words else None
        if why is not None:
            self.problem(why)
            analysable = False
        self.add(node_text(node), kind, (), tuple(words), extra_redirects, context, top, analysable)

    def test_command(
        self,
        node: Node,
        context: str,
        top: bool,
        analysable: bool,
        extra_redirects: tuple[Redirect, ...],
    ) -> None:
        self.scan(node, analysable, opaque=True)
        text = node_text(node)
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
            node_text(node), "assignment", tuple(assignments), (), extra_redirects,
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
            why = audit(node_text(node))
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
            is_shell, script = shell_script(variant)
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
    raw = node_text(node)
    children = node.named_children
    value_node = children[-1] if len(children) >= 2 else None
    name = node_text(children[0]) if children else raw.split("=", 1)[0]
    if value_node is None:
        return Word(raw, raw if raw.endswith("=") else None)
    value, _glob, brace = evaluate(value_node)
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


#: The simple commands (and problems) each plain part of a command line gives, by its
#: text, place and nesting depth: a part is read the same wherever it stands (`git log -n
#: 5 --oneline` in `... && ls a` and in `... && ls b`), and sharing its SimpleCommand lets
#: what is remembered of that object (file arguments, option files) be found again.
_PLAIN_PARTS: dict[tuple[str, bool, bool, int], tuple[tuple[SimpleCommand, ...], tuple[str, ...]]] = {}
PLAIN_PARTS_KEPT = 8192


def _add_plain(
    walker: _Walker,
    text: str,
    top: bool,
    assignments: tuple[Word, ...],
    words: tuple[Word, ...],
    piped: bool,
) -> None:
    """``walker.add`` of one part of a plain command line (bash_simple), remembered."""
    key = (text, top, piped, walker.depth)
    found = _PLAIN_PARTS.get(key)
    if found is None:
        # (the part's own problems, whatever the walker had already: add dedups them)
        outer, walker.problems = walker.problems, []
        first = len(walker.commands)
        try:
            walker.add(text, "command", assignments, words, (PIPED,) if piped else (),
                       "", top, True)
            found = (tuple(walker.commands[first:]), tuple(walker.problems))
        finally:
            walker.problems = outer
            del walker.commands[first:]
        if len(_PLAIN_PARTS) >= PLAIN_PARTS_KEPT:
            _PLAIN_PARTS.clear()
        _PLAIN_PARTS[key] = found
    walker.commands.extend(found[0])
    for problem in found[1]:
        walker.problem(problem)


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
                _add_plain(walker, text, top, assignments, words, piped)
            return _finish(command, walker)
    if "\\\n" in command and depth < MAX_NESTING:
        # Bash drops backslash-newline before splitting words; deny rules see that too.
        joined = _analyse(command.replace("\\\n", ""), depth + 1)
        walker.commands.extend(_mark_unanalysable(c, "joined lines") for c in joined.commands)
    source = command.encode("utf-8", "surrogatepass")
    root = parser().parse(source).root_node
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
