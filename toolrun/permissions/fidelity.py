"""Does tree-sitter-bash's tree say what bash will run? Places where the two part ways.

tree-sitter-bash recovers from input it does not expect, and sometimes it recovers
*without* an ERROR node: ``echo hi`` + newline + ``\\rm -rf x`` comes out as one ``echo``
command whose third word is ``\\n\\rm``, while bash runs ``rm``. So the tree is
only trusted when it re-tokenises to the source the way bash tokenises it:

- no ERROR or MISSING node;
- inside a simple command (and its words and redirections) nothing spans an unescaped
  newline: for bash a newline there ends the command;
- a leaf word holds no unquoted blank or shell metacharacter (bash would split there);
- two sibling words that touch (no blank between them) meet at a metacharacter
  (else bash reads them as one word), and the parts of a concatenation touch;
- the bytes between sibling nodes are blanks or line continuations only (nothing of
  the source is skipped).

:func:`problems` returns why the tree cannot be trusted; empty when it can.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

#: Nodes whose inside is literal text: gaps between their children are content.
_CONTENT = frozenset(
    {
        "string",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "heredoc_body",
        "heredoc_content",
        "comment",
        "regex",
        "string_content",
        "extglob_pattern",
    }
)
#: Nodes that end at an unescaped newline in bash.
_ONE_LINE = frozenset(
    {
        "command",
        "command_name",
        "concatenation",
        "file_redirect",
        "herestring_redirect",
        "variable_assignment",
        "variable_assignments",
        "declaration_command",
        "unset_command",
        "word",
        "simple_expansion",
        "number",
    }
)
#: Nodes whose children are parts of one word: they must touch.
_ONE_WORD = frozenset({"concatenation", "command_name"})
#: Nodes whose named children are separate words: touching ones must meet at a metacharacter.
_WORD_LISTS = frozenset(
    {"command", "declaration_command", "unset_command", "file_redirect", "variable_assignments"}
)
#: Inside these, words are operands of ``${...}`` or arithmetic, not shell words.
_EXPANSIONS = frozenset({"expansion", "arithmetic_expansion", "subscript"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
#: Where a leaf word is a shell word (inside ``${x:-a b}`` it is not).
_WORD_PARENTS = _WORD_LISTS | _ONE_WORD | {"variable_assignment"}
_METACHARS = frozenset(b" \t\n|&;()<>")
_BACKTICK = frozenset(b"`")
#: Leaves whose text bash never expands (single quotes, $'...', comments, heredoc text
#: under a quoted delimiter); every other leaf must not hide `...` or $(...).
_LITERAL_LEAVES = frozenset(
    {
        "raw_string",
        "ansi_c_string",
        "comment",
        "heredoc_content",
        "heredoc_start",
        "heredoc_end",
        "heredoc_body",
    }
)


def _unescaped(data: bytes, wanted: frozenset[int]) -> bool:
    """Whether ``data`` (an unquoted word) holds one of ``wanted`` not after a backslash."""
    if wanted.isdisjoint(data):
        return False
    if 0x5C not in data:
        return True
    i = 0
    while i < len(data):
        c = data[i]
        if c == 0x5C:  # backslash quotes the next byte
            i += 2
            continue
        if c in wanted:
            return True
        i += 1
    return False


def _unescaped_dollar_paren(data: bytes) -> bool:
    if b"$(" not in data:
        return False
    i = 0
    while i < len(data) - 1:
        if data[i] == 0x5C:
            i += 2
            continue
        if data[i] == 0x24 and data[i + 1] == 0x28:  # "$("
            return True
        i += 1
    return False


def _unescaped_process_paren(data: bytes) -> bool:
    """Whether ``data`` holds ``<(`` or ``>(`` not after a backslash: a process
    substitution, which bash runs even in the word of an unquoted ``${x:-...}``."""
    if b"<(" not in data and b">(" not in data:
        return False
    i = 0
    while i < len(data) - 1:
        if data[i] == 0x5C:
            i += 2
            continue
        if data[i] in (0x3C, 0x3E) and data[i + 1] == 0x28:  # "<(" or ">("
            return True
        i += 1
    return False


def _unquoted_heredoc(node: Node, source: bytes) -> bool:
    for child in node.children:
        if child.type == "heredoc_start":
            text = source[child.start_byte : child.end_byte]
            return not any(c in text for c in b"'\"\\")
    return False


def _hidden_substitution(node: Node, source: bytes) -> bool:
    """Whether a heredoc_content below ``node`` holds `...` or $(...) as plain text."""
    stack = list(node.children)
    while stack:
        child = stack.pop()
        if child.type == "heredoc_content" or (child.type == "heredoc_body" and not child.children):
            text = source[child.start_byte : child.end_byte]
            if _unescaped(text, _BACKTICK) or _unescaped_dollar_paren(text):
                return True
        elif child.type not in _SUBSTITUTIONS:
            stack.extend(child.children)
    return False


def _gap_ok(gap: bytes, *, newline: bool) -> bool:
    rest = gap.replace(b"\\\n", b"")
    return not rest.translate(None, b" \t\n" if newline else b" \t")


def problems(root: Node, source: bytes) -> list[str]:
    """Why the tree of ``source`` is not bash's reading of it (empty when it is)."""
    found: list[str] = []

    def say(message: str) -> None:
        if message not in found:
            found.append(message)

    # (the root's own range can leave text out: tree-sitter drops a leading `- ` or `\ `
    # before an assignment, where bash runs a program of that name)
    outside = source[: root.start_byte] + b"\n" + source[root.end_byte :]
    if not _gap_ok(outside, newline=True):
        say("part of the command is not covered by the parse")
    heredoc_rows: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, in_expansion = stack.pop()
        kind = node.type
        if kind == "heredoc_redirect":
            # Bash reads the bodies of several heredocs of one line in order; the
            # parser may give them to the wrong redirection (and quoting decides
            # whether `$(...)` in a body runs).
            row = node.start_point[0]
            if row in heredoc_rows:
                say(
                    "several heredocs start on one line: toolrun does not follow which "
                    "body belongs to which"
                )
            heredoc_rows.add(row)
            if _unquoted_heredoc(node, source) and _hidden_substitution(node, source):
                say("a command substitution in a heredoc the parser read as text: bash runs it")
        if node.is_missing or kind == "ERROR":
            say("the command does not parse as shell")
            continue
        children = node.children
        if not children:
            if not node.is_named or kind in _LITERAL_LEAVES:
                continue
            text = source[node.start_byte : node.end_byte]
            # (a cheap look for the characters first: most words have neither)
            if (b"`" in text or b"$(" in text) and (
                _unescaped(text, _BACKTICK) or _unescaped_dollar_paren(text)
            ):
                say("a command substitution the parser read as text: bash runs it")
            if (b"<(" in text or b">(" in text) and _unescaped_process_paren(text):
                # (tree-sitter reads `${x:-<(cmd)}` as an expansion holding a plain word;
                # bash runs cmd, in the default, `:=` and `:+` words alike)
                say("a process substitution the parser read as text: bash runs it")
            if kind == "word" and not in_expansion:
                parent = node.parent
                if (
                    parent is not None
                    and parent.type in _WORD_PARENTS
                    and _unescaped(text, _METACHARS)
                ):
                    say(
                        "a word holds an unquoted blank, newline or operator: "
                        "bash splits it where the parser did not"
                    )
            continue
        if kind in _CONTENT:
            # Literal text, but `$(...)` inside a string or heredoc is a command again.
            stack.extend(
                (child, False) for child in node.named_children if child.type not in _CONTENT
            )
            continue
        one_line = kind in _ONE_LINE
        one_word = kind in _ONE_WORD
        word_list = kind in _WORD_LISTS
        inner = (in_expansion or kind in _EXPANSIONS) and kind not in _SUBSTITUTIONS
        previous_end = node.start_byte
        previous_named = False
        previous_start = -1
        for child in children:
            start = child.start_byte
            if start > previous_end:
                gap = source[previous_end:start]
                if one_word or not _gap_ok(gap, newline=not one_line):
                    if one_line and b"\n" in gap:
                        say("a command spans an unescaped newline, which ends it for bash")
                    else:
                        say("part of the command is not covered by the parse")
            named = child.is_named
            end = child.end_byte
            if (
                word_list
                and start <= previous_end
                and named
                and previous_named
                and end > start > previous_start
                and source[start - 1] not in _METACHARS
                and source[start] not in _METACHARS
            ):
                say("two words the parser split touch: bash reads them as one word")
            previous_end = max(previous_end, end)
            previous_named, previous_start = named, start
            if named or child.child_count or child.is_missing:
                stack.append((child, inner))
            # (an anonymous token, an operator or a keyword, has nothing to say: but a
            # MISSING one, which is looked at like any node)
        if node.end_byte > previous_end:
            tail = source[previous_end : node.end_byte]
            if one_word or not _gap_ok(tail, newline=not one_line):
                say("part of the command is not covered by the parse")
    return found
