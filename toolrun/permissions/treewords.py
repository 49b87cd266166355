"""tree-sitter-bash nodes as :class:`~toolrun.permissions.words.Word`: the parser and
what a word node's value is after bash's quote removal (None when only run time knows).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from toolrun.permissions.braces import brace_expands
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

_GLOB_CHARS = frozenset("*?[")


# --------------------------------------------------------------------------- parser


@functools.cache
def parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def node_text(node: Node) -> str:
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


def evaluate(node: Node) -> tuple[str | None, bool, bool]:
    """(value, glob, brace) of a word-like node; value None when it depends on expansion."""
    kind = node.type
    if kind == "word":
        value, glob = _unescape_unquoted(node_text(node))
        return value, glob, False
    if kind == "number":
        return node_text(node), False, False
    if kind == "raw_string":
        return node_text(node)[1:-1], False, False
    if kind == "brace_expression":  # `{1..3}`: braces.brace_expands decides on the word
        return node_text(node), False, True
    if kind == "string":
        for child in node.named_children:
            if child.type != "string_content":
                return None, False, False
        # From the source, not the children: the parser drops newlines between them.
        return _unescape_double(node_text(node)[1:-1]), False, False
    if kind == "concatenation":
        values: list[str] = []
        glob = brace = False
        children = node.named_children
        for child in children:
            part, child_glob, child_brace = evaluate(child)
            if part is None:
                return None, False, False
            glob = glob or child_glob
            brace = brace or child_brace or (child.type == "word" and node_text(child) == "{")
            values.append(part)
        return "".join(values), glob, brace
    return None, False, False


def make_word(node: Node) -> Word:
    raw = node_text(node)
    value, glob, _brace = evaluate(node)
    # Only a brace with a comma or a sequence expands (`HEAD^{tree}` is literal).
    if value is not None and "{" in raw and brace_expands(raw):
        value = None
    # Bash expands a tilde prefix only when no character of it is quoted.
    prefix = raw.split("/", 1)[0]
    tilde = raw.startswith("~") and not any(c in prefix for c in "'\"\\$`")
    return Word(raw, value, glob, tilde)
