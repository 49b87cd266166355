"""less/more: ``+cmd`` runs less commands (``+!cmd`` a shell command), ``-o``/``-O`` write a
log file, ``-k`` reads key bindings, ``-t`` opens the file a tags file names.

less parses its own options much as getopt does: letters bundle, values glue or follow,
long names may be abbreviated (``--log`` is ``--log-file``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from toolrun.permissions.options import flag, spec, value
from toolrun.permissions.programs import parsed
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

NAMES = frozenset({"less", "more"})
#: less(1) ENVIRONMENT VARIABLES: input preprocessors (LESSOPEN='|cmd %s'), options read
#: at start (LESS='+!cmd'), key files (their #env section sets LESSOPEN), the editor `v`
#: runs, the history file it writes (envcode reads this).
CODE_ENV = frozenset(
    {"LESS", "LESSOPEN", "LESSCLOSE", "LESSKEY", "LESSKEYIN", "LESSKEY_SYSTEM",
     "LESSKEYIN_SYSTEM", "LESSKEY_CONTENT", "LESSEDIT", "LESSHISTFILE", "MORE"}
)  # fmt: skip


def harmless_env(name: str, value: str, _env: Mapping[str, str | None]) -> bool:
    """``LESS=-R``, ``LESSHISTFILE=-``: display flags, no history file."""
    from toolrun.permissions.envcode import plain_program

    if name in ("LESS", "MORE"):
        return plain_program(f"less {value}")
    if name == "LESSHISTFILE":
        return value in ("-", "/dev/null")
    return False


#: An option can write, run or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True
SPEC = spec(
    flag("-?"), flag("-a", "--search-skip-screen"), flag("-A", "--SEARCH-SKIP-SCREEN"),
    value("-b", "--buffers"), flag("-B", "--auto-buffers"), flag("-c", "--clear-screen"),
    flag("-C", "--CLEAR-SCREEN"), flag("-d", "--dumb"), value("-D", "--color"),
    flag("-e", "--quit-at-eof"), flag("-E", "--QUIT-AT-EOF"), flag("-f", "--force"),
    flag("-F", "--quit-if-one-screen"), flag("-g", "--hilite-search"),
    flag("-G", "--HILITE-SEARCH"), value("-h", "--max-back-scroll"),
    flag("-i", "--ignore-case"), flag("-I", "--IGNORE-CASE"), value("-j", "--jump-target"),
    flag("-J", "--status-column"), value("-k", "--lesskey-file"), value("--lesskey-src"),
    value("--lesskey-content"), flag("-K", "--quit-on-intr"), flag("-L", "--no-lessopen"),
    flag("-m", "--long-prompt"), flag("-M", "--LONG-PROMPT"), flag("-n", "--line-numbers"),
    flag("-N", "--LINE-NUMBERS"), value("-o", "--log-file"), value("-O", "--LOG-FILE"),
    value("-p", "--pattern"), value("-P", "--prompt"), flag("-q", "--quiet", "--silent"),
    flag("-Q", "--QUIET", "--SILENT"), flag("-r", "--raw-control-chars"),
    flag("-R", "--RAW-CONTROL-CHARS"), flag("-s", "--squeeze-blank-lines"),
    flag("-S", "--chop-long-lines"), value("-t", "--tag"), value("-T", "--tag-file"),
    flag("-u", "--underline-special"), flag("-U", "--UNDERLINE-SPECIAL"), flag("-V"),
    flag("-w", "--hilite-unread"), flag("-W", "--HILITE-UNREAD"), value("-x", "--tabs"),
    flag("-X", "--no-init"), value("-y", "--max-forw-scroll"), value("-z", "--window"),
    value('-"', "--quotes"), flag("-~", "--tilde"), value("-#", "--shift"),
    flag("--follow-name"), flag("--incsearch"), value("--line-num-width"), flag("--mouse"),
    flag("--no-keypad"), flag("--no-histdups"), value("--rscroll"), flag("--save-marks"),
    value("--status-col-width"), flag("--use-backslash"), flag("--use-color"),
    flag("--wordwrap"), flag("--exit-follow-on-close"), flag("--file-size"), value("--header"),
)  # fmt: skip


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    for word in argv[1:]:
        if (word.value or "").startswith("+"):
            return f"less {word.raw} runs less commands at start (+! runs a shell command)"
    found = parsed(argv)
    if found is None:
        return None
    for given in found.given:
        if given.key in ("-k", "--lesskey-src", "--lesskey-content"):
            return f"less {given.key} reads key bindings (which can run commands)"
        if given.key in ("-t", "-T"):
            return "less -t opens the file a tags file names"
    return None


def option_writes(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    return () if found is None else found.values("-o", "-O")
