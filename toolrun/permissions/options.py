"""Command-line options read as getopt / getopt_long read them.

A program's :class:`Spec` lists every option it accepts; :func:`parse` splits a command's
words into the options given (with their values) and the operands, as the program will:
glued short values (``-e.``, ``-n5``), bundles (``-rn``), ``--long=value``, unambiguous
long prefixes (``--from`` is ``--from-file`` to GNU diff), options after operands (GNU
permutes), ``--`` ending options. An option the table does not list is an error: the
caller treats the command as one it does not know (never read-only).

Words bash only knows at run time (``$X``, globs) are operands here; whether they could
become options is :func:`toolrun.permissions.readonly.option_words`'s question.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from toolrun.permissions.words import Word

#: flag: no value; required: ``-fV``, ``-f V``, ``--file=V``, ``--file V``; optional:
#: only glued (``-i.bak``) or after ``=`` (``--in-place=.bak``).
Arity = Literal["flag", "required", "optional"]


@dataclass(frozen=True, slots=True)
class Option:
    """One option under all its names (``-e``, ``--regexp``); the first name is its key."""

    names: tuple[str, ...]
    arity: Arity = "flag"

    @property
    def key(self) -> str:
        return self.names[0]


def flag(*names: str) -> Option:
    return Option(names, "flag")


def value(*names: str) -> Option:
    return Option(names, "required")


def optional(*names: str) -> Option:
    return Option(names, "optional")


@dataclass(frozen=True, slots=True, eq=False)  # (compared and hashed by identity)
class Spec:
    """What a program's option parser accepts."""

    short: Mapping[str, Option]
    long: Mapping[str, Option]
    #: getopt_long takes an unambiguous prefix of a long option (clap, lexopt do not).
    abbreviations: bool = True
    #: GNU getopt permutes: options may follow operands (``+`` in the optstring: no).
    permute: bool = True
    #: Whole words that are options too (``head -5``, ``tail +5``, ``sort +1``), key ``-NUM``.
    numbers: re.Pattern[str] | None = None
    #: ``numbers`` only as the first word (coreutils' obsolete ``head -5 FILE``).
    numbers_first: bool = False
    #: getopt glues a value to its letter (``-oFILE``); tree's own parser takes the next
    #: word and reads the rest of the cluster as more letters.
    glued: bool = True
    #: ``--no-NAME`` turns the flag ``--NAME`` off (ripgrep, curl, wget).
    negatable: bool = False


def spec(
    *options: Option,
    abbreviations: bool = True,
    permute: bool = True,
    numbers: str | None = None,
    numbers_first: bool = False,
    help_version: bool = True,
    glued: bool = True,
    negatable: bool = False,
) -> Spec:
    """A spec from option lists; GNU programs all take ``--help`` and ``--version``."""
    short: dict[str, Option] = {}
    long: dict[str, Option] = {}
    every = (*options, flag("--help"), flag("--version")) if help_version else options
    for option in every:
        for name in option.names:
            if name.startswith("--"):
                long[name[2:]] = option
            elif len(name) == 2 and name[0] == "-":
                short[name[1]] = option
            else:
                raise ValueError(f"not an option name: {name!r}")
    return Spec(short, long, abbreviations, permute,
                re.compile(numbers) if numbers else None, numbers_first, glued,
                negatable)


@dataclass(frozen=True, slots=True)
class Given:
    """One option on the command line: which, its value (None for flags), the word it was in."""

    option: Option
    value: Word | None
    word: Word

    @property
    def key(self) -> str:
        return self.option.key


@dataclass(frozen=True, slots=True)
class Parsed:
    """Options and operands; ``error`` when the program would refuse the command line.

    After an error the remaining words are still split (an unknown option is taken as a
    flag), so callers that must over-approximate (which words may be files) can.
    """

    given: tuple[Given, ...]
    operands: tuple[Word, ...]
    error: str | None = None

    def has(self, *keys: str) -> bool:
        return any(g.key in keys for g in self.given)

    def values(self, *keys: str) -> tuple[Word, ...]:
        return tuple(g.value for g in self.given if g.key in keys and g.value is not None)

    def last(self, *keys: str) -> Given | None:
        found = [g for g in self.given if g.key in keys]
        return found[-1] if found else None


_NUMBER = Option(("-NUM",), "flag")


def tail_of(word: Word, start: int) -> Word:
    """The rest of a static word from ``start`` (the value glued to ``-fFILE``, ``--f=FILE``).

    No tilde: bash expands one only at the start of a word (or after ``=`` in an assignment).
    """
    rest = (word.value or "")[start:]
    return Word(rest, rest, word.glob, False)


def _long(spec: Spec, name: str) -> Option | str:
    """The option ``--name`` stands for, or why there is none."""
    exact = spec.long.get(name)
    if exact is not None:
        return exact
    if spec.negatable and name.startswith("no-"):
        positive = spec.long.get(name[3:])
        if positive is not None and positive.arity == "flag":
            return positive
    if not spec.abbreviations or not name:
        return f"unknown option --{name}"
    found = {id(o): o for n, o in spec.long.items() if n.startswith(name)}
    if len(found) == 1:
        return next(iter(found.values()))
    if found:
        return f"ambiguous option --{name}"
    return f"unknown option --{name}"


def _is_option(word: Word) -> bool:
    text = word.value
    return text is not None and not word.glob and len(text) > 1 and text[0] == "-"


def parse(spec: Spec, words: Iterable[Word]) -> Parsed:
    """Split ``words`` (the arguments, program name excluded) as the program will."""
    items = list(words)
    given: list[Given] = []
    operands: list[Word] = []
    error: str | None = None
    i = 0
    n = len(items)
    options_end = False
    while i < n:
        word = items[i]
        i += 1
        text = word.value
        if options_end or text is None or word.glob:
            operands.append(word)
            if not spec.permute:
                options_end = True
            continue
        numbers = spec.numbers
        if numbers is not None and (not spec.numbers_first or i == 1) and numbers.fullmatch(text):
            given.append(Given(_NUMBER, tail_of(word, 1), word))
            continue
        if not _is_option(word):
            operands.append(word)
            if not spec.permute:
                options_end = True
            continue
        if text == "--":
            options_end = True
            continue
        if text.startswith("--"):
            name, eq, _ = text[2:].partition("=")
            found = _long(spec, name)
            if isinstance(found, str):
                error = error or found
                continue
            if found.arity == "flag":
                if eq:
                    error = error or f"option --{name} takes no value"
                given.append(Given(found, None, word))
            elif eq:
                given.append(Given(found, tail_of(word, 3 + len(name)), word))
            elif found.arity == "required":
                if i < n:
                    given.append(Given(found, items[i], word))
                    i += 1
                else:
                    error = error or f"option --{name} needs a value"
            else:
                given.append(Given(found, None, word))
            continue
        k = 1
        while k < len(text):
            letter = text[k]
            k += 1
            short = spec.short.get(letter)
            if short is None:
                error = error or f"unknown option -{letter}"
                continue
            if short.arity == "flag":
                given.append(Given(short, None, word))
                continue
            if not spec.glued and short.arity == "required":
                if i < n:
                    given.append(Given(short, items[i], word))
                    i += 1
                else:
                    error = error or f"option -{letter} needs a value"
                continue
            if k < len(text):
                given.append(Given(short, tail_of(word, k), word))
            elif short.arity == "required":
                if i < n:
                    given.append(Given(short, items[i], word))
                    i += 1
                else:
                    error = error or f"option -{letter} needs a value"
            else:
                given.append(Given(short, None, word))
            break
    return Parsed(tuple(given), tuple(operands), error)
