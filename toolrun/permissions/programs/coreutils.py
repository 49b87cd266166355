"""The small GNU coreutils (and ``which``, ``pwd``) in the read-only set: their whole option tables.

Taken from the GNU coreutils 9 manual and ``--help`` of the installed programs. An option
not listed makes the command not read-only. ``--files0-from=F`` reads F *and every file
named inside it*, which toolrun cannot see before the command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.permissions.options import Spec, flag, optional, spec, value
from toolrun.permissions.programs import parsed, unknown_files
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.programs import Context

_LS = spec(
    flag("-a", "--all"), flag("-A", "--almost-all"), flag("--author"), flag("-b", "--escape"),
    value("--block-size"), flag("-B", "--ignore-backups"), flag("-c"), flag("-C"),
    optional("--color", "--colour"), flag("-d", "--directory"), flag("-D", "--dired"), flag("-f"),
    optional("-F", "--classify"), flag("--file-type"), value("--format"), flag("--full-time"),
    flag("-g"), flag("--group-directories-first"), flag("-G", "--no-group"),
    flag("-h", "--human-readable"), flag("--si"), flag("-H", "--dereference-command-line"),
    flag("--dereference-command-line-symlink-to-dir"), value("--hide"),
    optional("--hyperlink"), value("--indicator-style"), flag("-i", "--inode"),
    value("-I", "--ignore"), flag("-k", "--kibibytes"), flag("-l"), flag("-L", "--dereference"),
    flag("-m"), flag("-n", "--numeric-uid-gid"), flag("-N", "--literal"), flag("-o"), flag("-p"),
    flag("-q", "--hide-control-chars"), flag("--show-control-chars"), flag("-Q", "--quote-name"),
    value("--quoting-style"), flag("-r", "--reverse"), flag("-R", "--recursive"),
    flag("-s", "--size"), flag("-S"), value("--sort"), value("--time"), value("--time-style"),
    flag("-t"), value("-T", "--tabsize"), flag("-u"), flag("-U"), flag("-v"),
    value("-w", "--width"), flag("-x"), flag("-X"), flag("-Z", "--context"), flag("--zero"),
    flag("-1"),
)  # fmt: skip
# (``ls -F``'s short form takes no value; only ``--classify=WHEN`` does)
_LS = Spec({**_LS.short, "F": flag("-F")}, _LS.long)
_CAT = spec(
    flag("-A", "--show-all"), flag("-b", "--number-nonblank"), flag("-e"),
    flag("-E", "--show-ends"), flag("-n", "--number"), flag("-s", "--squeeze-blank"), flag("-t"),
    flag("-T", "--show-tabs"), flag("-u"), flag("-v", "--show-nonprinting"),
)  # fmt: skip
_HEAD = spec(
    value("-c", "--bytes"), value("-n", "--lines"), flag("-q", "--quiet", "--silent"),
    flag("-v", "--verbose"), flag("-z", "--zero-terminated"),
    numbers=r"-\d+[bkmcl]?[qv]*", numbers_first=True,
)  # fmt: skip
_TAIL = spec(
    value("-c", "--bytes"), optional("--follow"), flag("-f"), flag("-F"), value("-n", "--lines"),
    value("--max-unchanged-stats"), value("--pid"), flag("-q", "--quiet", "--silent"),
    flag("--retry"), value("-s", "--sleep-interval"), flag("-v", "--verbose"),
    flag("-z", "--zero-terminated"),
    numbers=r"[-+]\d+[bcl]?f?", numbers_first=True,
)  # fmt: skip
_WC = spec(
    flag("-c", "--bytes"), flag("-m", "--chars"), flag("-l", "--lines"), value("--files0-from"),
    flag("-L", "--max-line-length"), flag("-w", "--words"), value("--total"),
)  # fmt: skip
_STAT = spec(
    flag("-L", "--dereference"), flag("-f", "--file-system"), value("--cached"),
    value("-c", "--format"), value("--printf"), flag("-t", "--terse"),
)  # fmt: skip
_DU = spec(
    flag("-0", "--null"), flag("-a", "--all"), flag("--apparent-size"),
    value("-B", "--block-size"), flag("-b", "--bytes"), flag("-c", "--total"),
    flag("-D", "--dereference-args"), value("-d", "--max-depth"), value("--files0-from"),
    flag("-H"), flag("-h", "--human-readable"), flag("--inodes"), flag("-k"),
    flag("-L", "--dereference"), flag("-l", "--count-links"), flag("-m"),
    flag("-P", "--no-dereference"), flag("-S", "--separate-dirs"), flag("--si"),
    flag("-s", "--summarize"), value("-t", "--threshold"), optional("--time"),
    value("--time-style"), value("-X", "--exclude-from"), value("--exclude"),
    flag("-x", "--one-file-system"),
)  # fmt: skip
_BASENAME = spec(flag("-a", "--multiple"), value("-s", "--suffix"), flag("-z", "--zero"))
_DIRNAME = spec(flag("-z", "--zero"))
_REALPATH = spec(
    flag("-e", "--canonicalize-existing"), flag("-m", "--canonicalize-missing"),
    flag("-L", "--logical"), flag("-P", "--physical"), flag("-q", "--quiet"),
    value("--relative-to"), value("--relative-base"), flag("-s", "--strip", "--no-symlinks"),
    flag("-z", "--zero"),
)  # fmt: skip
_READLINK = spec(
    flag("-f", "--canonicalize"), flag("-e", "--canonicalize-existing"),
    flag("-m", "--canonicalize-missing"), flag("-n", "--no-newline"), flag("-q", "--quiet"),
    flag("-s", "--silent"), flag("-v", "--verbose"), flag("-z", "--zero"),
)  # fmt: skip
_UNAME = spec(
    flag("-a", "--all"), flag("-s", "--kernel-name"), flag("-n", "--nodename"),
    flag("-r", "--kernel-release"), flag("-v", "--kernel-version"), flag("-m", "--machine"),
    flag("-p", "--processor"), flag("-i", "--hardware-platform"),
    flag("-o", "--operating-system"),
)  # fmt: skip
_CUT = spec(
    value("-b", "--bytes"), value("-c", "--characters"), value("-d", "--delimiter"),
    value("-f", "--fields"), flag("-n"), flag("--complement"), flag("-s", "--only-delimited"),
    value("--output-delimiter"), flag("-z", "--zero-terminated"),
)  # fmt: skip
_NL = spec(
    value("-b", "--body-numbering"), value("-d", "--section-delimiter"),
    value("-f", "--footer-numbering"), value("-h", "--header-numbering"),
    value("-i", "--line-increment"), value("-l", "--join-blank-lines"),
    value("-n", "--number-format"), flag("-p", "--no-renumber"),
    value("-s", "--number-separator"), value("-v", "--starting-line-number"),
    value("-w", "--number-width"),
)  # fmt: skip
_TAC = spec(flag("-b", "--before"), flag("-r", "--regex"), value("-s", "--separator"))
#: Debian's which takes -a alone; GNU which (other distributions) the rest, all harmless.
_WHICH = spec(
    flag("-a", "--all"), flag("-i", "--read-alias"), flag("--skip-alias"),
    flag("--read-functions"), flag("--skip-functions"), flag("--skip-dot"), flag("--skip-tilde"),
    flag("--show-dot"), flag("--show-tilde"), flag("--tty-only"), flag("-v", "-V"),
)  # fmt: skip
#: bash's pwd builtin (and /bin/pwd).
_PWD = spec(flag("-L", "--logical"), flag("-P", "--physical"))

SPECS: dict[str, Spec] = {
    "ls": _LS, "dir": _LS, "vdir": _LS, "cat": _CAT, "head": _HEAD, "tail": _TAIL, "wc": _WC,
    "stat": _STAT, "du": _DU, "basename": _BASENAME, "dirname": _DIRNAME,
    "realpath": _REALPATH, "readlink": _READLINK, "uname": _UNAME, "whoami": spec(),
    "nproc": spec(flag("--all"), value("--ignore")), "cut": _CUT, "nl": _NL, "tac": _TAC,
    "which": _WHICH, "pwd": _PWD,
}  # fmt: skip
NAMES = frozenset(SPECS)


def check(argv: tuple[Word, ...], ctx: Context) -> str | None:
    found = parsed(argv)
    if found is not None and found.has("--files0-from"):
        return f"{argv[0].value} --files0-from reads the files named inside a file"
    return None


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    if found is None:
        return ()
    listed = found.values("--files0-from")
    # The files named inside F are read too: not known before the command runs.
    return (*listed, *found.values("-X"), *unknown_files(listed))
