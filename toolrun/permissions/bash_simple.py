"""The commonest Bash commands read without tree-sitter: plain words joined by ``|``,
``&&``, ``||`` and ``;``.

Most commands an agent runs are a few words of letters, digits and ``-./_:=,``,
perhaps quoted, perhaps piped. For those the parse tree is known in advance (one
``command`` node per command, one word node per word, no ERROR and nothing for the
fidelity check to find), so building it with tree-sitter and walking it again was half
of a new command's analysis. :func:`simple_commands` reads such a command directly and
gives the same words the tree walk gives; anything else, however slightly unusual, gives
None and goes through the parser (``toolrun.permissions.bash``). A property test holds
the two to the same analysis for every command.
"""

from __future__ import annotations

import re

from toolrun.permissions.words import Word

#: Characters of an unquoted word: none that bash treats specially (no glob, tilde,
#: expansion, quoting, comment, brace, redirection or grouping character).
_PLAIN = r"[A-Za-z0-9_./:=,-]"
#: Inside single quotes (literal for bash): any printable ASCII but the quote itself.
_SINGLE = r"'[ !-&(-~]*'"
#: Inside double quotes: printable ASCII less what bash expands or escapes there.
_DOUBLE = r'"[ !#%-[\]-_a-~]*"'
_PART = re.compile(rf"{_PLAIN}+|{_SINGLE}|{_DOUBLE}")
#: a whole command of such words and operators (checked first: most commands fail here)
# (one character at a time, never a repeat inside a repeat: a command that fails to
# match fails in linear time)
_WHOLE = re.compile(rf"(?:[A-Za-z0-9_./:=,| ;-]|&&|{_SINGLE}|{_DOUBLE})*")
#: an operator (group 1) or a word; the blanks between them are skipped
_TOKEN = re.compile(rf"(\|\||&&|[|;])|(?:{_PLAIN}|{_SINGLE}|{_DOUBLE})+")
_ODD_NAME = re.compile(r"^-|[:=,]")
_ASSIGNMENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*=[A-Za-z0-9_./-]+")

#: Words that make bash (or tree-sitter) read the command as something other than a
#: simple command: reserved words, and the builtins tree-sitter gives their own nodes.
_SPECIAL = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "case", "esac", "for", "select",
     "while", "until", "do", "done", "in", "function", "time", "coproc", "declare",
     "typeset", "export", "readonly", "local", "unset", "unsetenv", "[[", "]]"}
)  # fmt: skip

#: (text, top level, assignments, words, reads a pipe) of each simple command
Simple = tuple[str, bool, tuple[Word, ...], tuple[Word, ...], bool]


def simple_commands(command: str) -> list[Simple] | None:
    """The simple commands of ``command`` in order when it is only plain words and the
    operators ``| && || ;`` between commands; None when it is anything else."""
    if _WHOLE.fullmatch(command) is None:
        return None
    if "'" not in command and '"' not in command:
        return _unquoted(command)
    return _tokenized(command)


#: Between the parts of an unquoted command: an operator, and the blanks around it.
_SPLIT = re.compile(r" *(\|\||&&|[|;]) *")
#: The words of an unquoted part (None: not a part the fast reading takes), by its text.
_PART_WORDS: dict[str, tuple[tuple[Word, ...], tuple[Word, ...]] | None] = {}
PART_WORDS_KEPT = 8192
_UNREAD: tuple[tuple[Word, ...], tuple[Word, ...]] = ((), ())  # (a marker: not read yet)


def _unquoted(command: str) -> list[Simple] | None:
    """:func:`_tokenized` of a command without quotes (so only blanks separate words and
    nothing hides an operator): split at its operators, each part's words read once."""
    pieces = _SPLIT.split(command)
    # pieces: part, operator, part, ..., part (the first and last with their outer blanks)
    operators = pieces[1::2]
    last = len(pieces) - 1
    out: list[Simple] = []
    piped_before = False
    for k in range(0, len(pieces), 2):
        text = pieces[k]
        if k == 0 or k == last:
            text = text.strip(" ")
        if not text:
            return None  # no command: an operator first, two in a row, or at the end
        read = _PART_WORDS.get(text, _UNREAD)
        if read is _UNREAD:
            read = _read_part(text)
            if len(_PART_WORDS) >= PART_WORDS_KEPT:
                _PART_WORDS.clear()
            _PART_WORDS[text] = read
        if read is None:
            return None
        piped = k < last and operators[k // 2] == "|"
        out.append((text, not (piped or piped_before), read[0], read[1], piped_before))
        piped_before = piped
    if operators.count("|") > 1 and ("&&" in operators or "||" in operators):
        return None  # (tree-sitter nests `a | b | c && d` in ways of its own)
    return out


def _read_part(text: str) -> tuple[tuple[Word, ...], tuple[Word, ...]] | None:
    """(assignments, words) of one unquoted part, as :func:`_tokenized` reads them."""
    assignments: list[Word] = []
    words: list[Word] = []
    for raw in text.split(" "):
        if raw and not _take(raw, assignments, words):  # (empty: blanks between words)
            return None
    if not words:
        return None  # assignments alone
    return tuple(assignments), tuple(words)


def _take(raw: str, assignments: list[Word], words: list[Word]) -> bool:
    """Add one word of a part to its assignments (before the command name) or its words;
    False when the fast reading does not take it."""
    if not words and "=" in raw:
        assignment = _assignment(raw)
        if assignment is None:
            return False
        assignments.append(assignment)
        return True
    word = _word(raw, name=not words)
    if word is None:
        return False
    words.append(word)
    return True


def _tokenized(command: str) -> list[Simple] | None:
    """:func:`simple_commands` read token by token (quoted words included)."""
    out: list[Simple] = []
    operators: list[str] = []
    assignments: list[Word] = []
    words: list[Word] = []
    start = last = 0
    piped_before = False
    for token in _TOKEN.finditer(command):
        op = token.group(1)
        if op is None:  # a word
            raw = token.group()
            if not words and not assignments:
                start = token.start()
            if not _take(raw, assignments, words):
                return None
            last = token.end()
            continue
        if not words:
            return None  # no command name (an operator first, two in a row, an assignment)
        piped = op == "|"
        out.append((command[start:last], not (piped or piped_before), tuple(assignments),
                    tuple(words), piped_before))
        operators.append(op)
        assignments, words, piped_before = [], [], piped
    if not words:
        return None  # nothing, or a trailing operator
    out.append((command[start:last], not piped_before, tuple(assignments), tuple(words),
                piped_before))
    if operators.count("|") > 1 and ("&&" in operators or "||" in operators):
        return None  # (tree-sitter nests `a | b | c && d` in ways of its own)
    return out


def _word(raw: str, *, name: bool) -> Word | None:
    # (tree-sitter reads `==` as a test's operator, and a name that starts with `-` or
    # holds `:`, `=` or `,` as something else again)
    if raw in _SPECIAL or "==" in raw or raw[0] == "=" or (name and _ODD_NAME.search(raw)):
        return None
    if "'" not in raw and '"' not in raw:
        return Word(raw, raw)
    parts = _PART.findall(raw)
    if parts[0] in _SPECIAL:  # `if''`: still the reserved word for tree-sitter
        return None
    value = "".join(p[1:-1] if p[0] in "'\"" else p for p in parts)
    return Word(raw, value)


def _assignment(raw: str) -> Word | None:
    """``NAME=value`` before the command name (the value plain and not empty)."""
    found = _ASSIGNMENT.fullmatch(raw)
    if found is None:
        return None
    return Word(raw, raw)
