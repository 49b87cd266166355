"""ripgrep: ``--pre`` and ``--hostname-bin`` run programs, ``-z`` runs decompressors;
``-f``/``--ignore-file`` read files; it reads whole trees.

ripgrep 14's options (``rg --help``). Its parser (lexopt) bundles letters and glues
values (``-e.``) but takes no abbreviations; ``--no-X`` turns a switch off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.options import flag, spec, value
from toolrun.permissions.programs import parsed
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"rg"})
#: ripgrep reads options from this file: `--pre=CMD` runs a program (envcode reads this).
CODE_ENV = frozenset({"RIPGREP_CONFIG_PATH"})
#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
SPEC = spec(
    # search
    value("-e", "--regexp"), value("-f", "--file"), value("--pre"), value("--pre-glob"),
    flag("-z", "--search-zip"), flag("-s", "--case-sensitive"), flag("--crlf"),
    value("--dfa-size-limit"), value("-E", "--encoding"), value("--engine"),
    flag("-F", "--fixed-strings"), flag("-i", "--ignore-case"), flag("-v", "--invert-match"),
    flag("-x", "--line-regexp"), value("-m", "--max-count"), flag("--mmap"),
    flag("-U", "--multiline"), flag("--multiline-dotall"), flag("--unicode"),
    flag("--null-data"), flag("-P", "--pcre2"), value("--regex-size-limit"),
    flag("-S", "--smart-case"), flag("--stop-on-nonmatch"), flag("-a", "--text"),
    value("-j", "--threads"), flag("-w", "--word-regexp"), flag("--auto-hybrid-regex"),
    flag("--pcre2-unicode"), flag("--encoding-none"),
    # filter
    flag("--binary"), flag("-L", "--follow"), value("-g", "--glob"),
    flag("--glob-case-insensitive"), flag("-.", "--hidden"), value("--iglob"),
    value("--ignore-file"), flag("--ignore-file-case-insensitive"),
    value("-d", "--max-depth", "--maxdepth"), value("--max-filesize"), flag("--ignore"),
    flag("--ignore-dot"), flag("--ignore-exclude"), flag("--ignore-files"),
    flag("--ignore-global"), flag("--ignore-parent"), flag("--ignore-vcs"),
    flag("--require-git"), flag("--one-file-system"), value("-t", "--type"),
    value("-T", "--type-not"), value("--type-add"), value("--type-clear"),
    flag("-u", "--unrestricted"), flag("--ignore-messages"), flag("--messages"),
    # output
    value("-A", "--after-context"), value("-B", "--before-context"), flag("--block-buffered"),
    flag("-b", "--byte-offset"), value("--color", "--colour"), value("--colors"),
    flag("--column"), value("-C", "--context"), value("--context-separator"),
    flag("--context-separator-none"),
    value("--field-context-separator"), value("--field-match-separator"), flag("--heading"),
    flag("-h"), value("--hostname-bin"), value("--hyperlink-format"), flag("--include-zero"),
    flag("--line-buffered"), flag("-n", "--line-number"), flag("-N"),
    value("-M", "--max-columns"), flag("--max-columns-preview"), flag("-0", "--null"),
    flag("-o", "--only-matching"), value("--path-separator"), flag("--passthru", "--passthrough"),
    flag("-p", "--pretty"), flag("-q", "--quiet"), value("-r", "--replace"), value("--sort"),
    value("--sortr"), flag("--sort-files"), flag("--trim"), flag("--vimgrep"),
    flag("-H", "--with-filename"), flag("-I", "--filename"), flag("-c", "--count"),
    flag("--count-matches"), flag("-l", "--files-with-matches"),
    flag("--files-without-match"), flag("--json"), flag("--debug"), flag("--stats"),
    flag("--trace"), flag("--files"), value("--generate"), flag("--config"),
    flag("--pcre2-version"), flag("--type-list"), flag("-V"), flag("--line-number-none"),
    abbreviations=False, negatable=True,
)  # fmt: skip
#: Options that give the patterns: then the first operand is a file.
PATTERN_OPTIONS = frozenset({"-e", "-f"})


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    found = parsed(argv)
    if found is None:
        return None
    for given in found.given:
        if given.key in ("--pre", "--hostname-bin"):
            return f"rg {given.key} runs other programs"
        if given.key == "-z" and not (given.word.value or "").startswith("--no-"):
            return "rg -z runs decompression programs"
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    if found is None:
        return ()
    return tuple(w for w in found.values("-f", "--ignore-file") if w.value != "-")


def recursive(argv: tuple[Word, ...]) -> bool:
    return True
