"""Copies, moves, links and archives: what a command carries to a new name.

A Read rule covers a path, not the bytes in it: ``cp -r config build/cfg`` puts
``config/.env`` where ``Read(./config/.env)`` no longer reaches, and the next
``cat build/cfg/.env`` prints it. So the engine decides a copy as a *read* of
everything it carries (a tree is checked entry by entry) and a *write* of where
it lands. This module only finds those operands, with each program's own option
grammar (getopt_long for GNU cp/mv/ln/install and tar, popt for rsync, getopt
for scp, Info-ZIP's own for zip); the resolver decides them.

What cannot be told (an option the table does not list, a word known only at
run time, names read from a file or stdin, a remote source) is a ``problem``:
the sources are then unknown, and the resolver never lets a rule allow that
while a Read deny or ask rule exists.

Kept in one module: one small option grammar per copying program, all feeding the
one operand model (sources, destination, what a tree carries) that the resolver reads.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from toolrun.permissions.words import Word

#: Whether a long option takes a value: no, yes (``--x V`` or ``--x=V``), only ``--x=V``.
NONE, REQUIRED, OPTIONAL = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Grammar:
    """One program's options, as getopt_long reads them."""

    flags: str
    valued: str
    longs: Mapping[str, int] = field(default_factory=dict)
    #: A short letter and the long option it spells (so values are found under one name).
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: getopt_long accepts an unambiguous prefix (``--target`` for ``--target-directory``);
    #: popt (rsync) does not.
    abbreviations: bool = True
    #: ``--no-X`` is an option whenever ``--X`` is (popt's negation).
    negations: bool = False


@dataclass(frozen=True, slots=True)
class Parsed:
    """Operands in order, option values by long name (or letter), and why it failed.

    ``events`` is the command line as getopt returned it, in order: ``(name, value)``
    for an option, ``("", word)`` for an operand (tar's ``-C`` applies to what follows).
    """

    operands: tuple[Word, ...]
    values: Mapping[str, tuple[Word, ...]]
    problem: str | None = None
    events: tuple[tuple[str, Word | None], ...] = ()

    def flag(self, name: str) -> bool:
        return name in self.values

    def value(self, name: str) -> Word | None:
        found = self.values.get(name)
        return found[-1] if found else None


@dataclass(frozen=True, slots=True)
class Carried:
    """What one copy-like command reads and where it puts it.

    ``sources`` are read (a directory as its whole tree; ``follows``: symlinks inside
    it are followed, so what they point to is carried too); ``destinations`` are
    written. ``problem`` says why the sources cannot all be known.
    """

    program: str
    sources: tuple[Word, ...] = ()
    destinations: tuple[Word, ...] = ()
    follows: bool = False
    problem: str | None = None


def _names(kind: int, text: str) -> dict[str, int]:
    """A table of long options that all take a value (or all take none), from one string."""
    return dict.fromkeys(text.split(), kind)


def _word(text: str, tilde: bool = False) -> Word:
    return Word(text, text, False, tilde)


def _tail(word: Word, start: int) -> Word:
    value = (word.value or "")[start:]
    return Word(value, value, word.glob, False)


def parse(argv: Sequence[Word], grammar: Grammar) -> Parsed:
    """getopt_long over ``argv[1:]``: bundles (``-rv``), glued values (``-tDIR``),
    ``--long=value``, prefixes, options after operands (GNU permutes), ``--``."""
    operands: list[Word] = []
    values: dict[str, list[Word]] = {}
    events: list[tuple[str, Word | None]] = []
    words = list(argv[1:])
    i = 0
    done = False

    def put(name: str, value: Word | None) -> None:
        name = grammar.aliases.get(name, name)
        values.setdefault(name, []).extend(() if value is None else (value,))
        events.append((name, value))

    def operand(word: Word) -> None:
        operands.append(word)
        events.append(("", word))

    while i < len(words):
        word = words[i]
        i += 1
        text = word.value
        if done:
            if text is None:
                return Parsed((), {}, f"{word.raw} is only known when the command runs")
            operand(word)
            continue
        if text is None:
            # `$OPTS` may be an option, an operand or several words: nothing is known.
            return Parsed((), {}, f"{word.raw} is only known when the command runs")
        if text == "--":
            done = True
            continue
        if word.glob or not text.startswith("-") or text == "-":
            operand(word)
            continue
        if text.startswith("--"):
            name, eq, _ = text[2:].partition("=")
            long = _long(name, grammar)
            if long is None:
                return Parsed((), {}, f"{argv[0].text} does not take --{name} (or it is "
                              "ambiguous); toolrun cannot tell its operands")
            kind = grammar.longs.get(long, NONE)
            if eq:
                if kind == NONE:
                    return Parsed((), {}, f"--{long} takes no value")
                put(long, _tail(word, text.index("=") + 1))
            elif kind == REQUIRED:
                if i >= len(words):
                    return Parsed((), {}, f"--{long} needs a value")
                put(long, words[i])
                i += 1
            else:
                put(long, None)
            continue
        cluster = text[1:]
        for k, letter in enumerate(cluster):
            if letter in grammar.valued:
                if k + 1 < len(cluster):
                    put(letter, _tail(word, k + 2))
                elif i < len(words):
                    put(letter, words[i])
                    i += 1
                else:
                    return Parsed((), {}, f"-{letter} needs a value")
                break
            if letter not in grammar.flags:
                return Parsed((), {}, f"{argv[0].text} does not take -{letter}; toolrun "
                              "cannot tell its operands")
            put(letter, None)
    return Parsed(tuple(operands), {k: tuple(v) for k, v in values.items()}, None,
                  tuple(events))


def _long(name: str, grammar: Grammar) -> str | None:
    longs = grammar.longs
    if name in longs:
        return name
    if grammar.negations and name.startswith("no-") and name[3:] in longs:
        return name[3:]
    if not grammar.abbreviations or not name:
        return None
    found = [n for n in longs if n.startswith(name)]
    return found[0] if len(found) == 1 else None


# ---------------------------------------------------------------------- the grammars

_R, _O = REQUIRED, OPTIONAL
_COREUTILS_COMMON = {"backup": _O, "suffix": _R, "target-directory": _R,
                     "no-target-directory": NONE, "verbose": NONE, "help": NONE,
                     "version": NONE, "force": NONE, "interactive": NONE}
_COREUTILS_ALIASES = {"t": "target-directory", "S": "suffix", "T": "no-target-directory"}

CP = Grammar(
    flags="abdfHilLnPpRrsTuvxZ", valued="St",
    longs={**_COREUTILS_COMMON, "archive": NONE, "attributes-only": NONE,
           "copy-contents": NONE, "debug": NONE, "dereference": NONE, "link": NONE,
           "no-clobber": NONE, "no-dereference": NONE, "no-preserve": _R,
           "one-file-system": NONE, "parents": NONE, "preserve": _O, "recursive": NONE,
           "reflink": _O, "remove-destination": NONE, "sparse": _R,
           "strip-trailing-slashes": NONE, "symbolic-link": NONE, "update": _O,
           "keep-directory-symlink": NONE, "context": _O},
    aliases={**_COREUTILS_ALIASES, "L": "dereference", "H": "dereference"},
)
MV = Grammar(
    flags="bfinTuvZ", valued="St",
    longs={**_COREUTILS_COMMON, "debug": NONE, "exchange": NONE, "no-clobber": NONE,
           "no-copy": NONE, "strip-trailing-slashes": NONE, "update": _O, "context": NONE},
    aliases=_COREUTILS_ALIASES,
)
LN = Grammar(
    flags="bdFfinLPrsTv", valued="St",
    longs={**_COREUTILS_COMMON, "directory": NONE, "logical": NONE, "no-dereference": NONE,
           "physical": NONE, "relative": NONE, "symbolic": NONE},
    aliases={**_COREUTILS_ALIASES, "s": "symbolic", "r": "relative"},
)
INSTALL = Grammar(
    flags="bcCdDpsTvZ", valued="gmoSt",
    longs={**_COREUTILS_COMMON, "compare": NONE, "debug": NONE, "directory": NONE,
           "group": _R, "mode": _R, "owner": _R, "preserve-timestamps": NONE,
           "preserve-context": NONE, "strip": NONE, "strip-program": _R, "context": _O},
    aliases={**_COREUTILS_ALIASES, "d": "directory"},
)
#: rsync's options (rsync(1) "OPTIONS SUMMARY"); popt: no prefixes, ``--no-X`` negates.
RSYNC = Grammar(
    flags="vqcarRbulLkKHpEAXogDtUNOJSnWxyCFzhiPm0468Ids", valued="BefMT",
    longs=_names(NONE, (
        "verbose quiet no-motd checksum archive recursive relative no-implied-dirs backup "
        "update inplace append append-verify dirs old-dirs mkpath links copy-links "
        "copy-unsafe-links safe-links munge-links copy-dirlinks keep-dirlinks hard-links "
        "perms executability acls xattrs owner group devices copy-devices write-devices "
        "specials times atimes open-noatime crtimes omit-dir-times omit-link-times super "
        "fake-super sparse preallocate dry-run whole-file one-file-system existing "
        "ignore-existing remove-source-files delete delete-before delete-during "
        "delete-delay delete-after delete-excluded ignore-missing-args delete-missing-args "
        "ignore-errors force partial progress delay-updates prune-empty-dirs numeric-ids "
        "ignore-times size-only fuzzy compress cvs-exclude from0 protect-args secluded-args "
        "trust-sender blocking-io stats 8-bit-output human-readable itemize-changes "
        "list-only ipv4 ipv6 help version old-args"
    )) | _names(_R, (
        "rsh rsync-path block-size backup-dir suffix chmod chown usermap groupmap copy-as "
        "max-delete max-size min-size max-alloc partial-dir timeout contimeout "
        "modify-window temp-dir compare-dest copy-dest link-dest compress-choice zc "
        "compress-level zl skip-compress filter exclude exclude-from include include-from "
        "files-from address port sockopts out-format log-file log-file-format "
        "password-file bwlimit stop-after stop-at write-batch only-write-batch read-batch "
        "protocol iconv checksum-seed checksum-choice cc info debug outbuf remote-option "
        "early-input"
    )),
    aliases={"L": "copy-links", "f": "filter", "e": "rsh"},
    abbreviations=False, negations=True,
)
#: OpenSSH scp(1): getopt, no long options.
SCP = Grammar(flags="346ABCdOpqRrsTv", valued="cDFiJlloPSX")
#: GNU tar's short options; the long table lists the options tar(1) documents that a
#: copy is built with (an unlisted one makes the operands unknown).
TAR_MODES = frozenset("crutxdA")
TAR = Grammar(
    flags="crutxdAvkmpPhlSWwGjJzZaBiMORsUo", valued="fCTXbHIKLNVgF",
    longs=_names(NONE, (
        "create append update list extract get diff compare catenate concatenate delete "
        "verbose keep-old-files overwrite touch preserve-permissions same-permissions "
        "absolute-names dereference check-links sparse verify interactive confirmation "
        "bzip2 xz gzip gunzip ungzip compress uncompress lzip lzma lzop zstd auto-compress "
        "no-recursion recursion one-file-system numeric-owner no-same-owner same-owner "
        "no-same-permissions preserve-order same-order remove-files totals show-defaults "
        "null no-null wildcards no-wildcards anchored no-anchored ignore-case no-ignore-case "
        "exclude-vcs exclude-vcs-ignores exclude-backups exclude-caches full-time utc "
        "multi-volume read-full-records ignore-zeros ignore-failed-read unlink-first "
        "recursive-unlink skip-old-files keep-newer-files keep-directory-symlink "
        "delay-directory-restore no-delay-directory-restore acls no-acls xattrs no-xattrs "
        "selinux no-selinux to-stdout show-transformed-names show-stored-names "
        "no-auto-compress help version posix seek no-seek force-local warning"
    )) | _names(_R, (
        "file directory files-from exclude-from blocking-factor format "
        "use-compress-program starting-file tape-length newer-mtime after-date "
        "label listed-incremental info-script new-volume-script exclude transform xform "
        "owner group mode mtime strip-components suffix backup-dir record-size "
        "checkpoint-action occurrence sort quoting-style exclude-tag exclude-tag-all "
        "exclude-tag-under newer to-command rsh-command volno-file level"
    )) | {"backup": _O, "checkpoint": _O, "index-file": _R, "owner-map": _R,
                  "group-map": _R, "hole-detection": _R, "pax-option": _R},
    aliases={"f": "file", "C": "directory", "T": "files-from", "h": "dereference",
             "c": "create", "r": "append", "u": "update", "t": "list", "x": "extract",
             "get": "extract", "d": "diff", "compare": "diff", "A": "catenate",
             "concatenate": "catenate", "X": "exclude-from", "O": "to-stdout"},
)
#: ``git mv``'s own options (git-mv(1)); git's parse-options takes unambiguous prefixes.
GIT_MV = Grammar(flags="vfnk", valued="",
                 longs={"verbose": NONE, "force": NONE, "dry-run": NONE, "sparse": NONE})
#: git's options before the sub-command that change nothing about which files it reads.
_GIT_PLAIN = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs",
                        "--no-replace-objects", "--no-advice"})
#: macOS ditto(1).
DITTO = Grammar(
    flags="cxkvVXzjh", valued="",
    longs=_names(NONE, (
        "rsrc norsrc extattr noextattr qtn noqtn acl noacl persistRootless "
        "nopersistRootless sequesterRsrc keepParent hfsCompression nohfsCompression "
        "preserveHFSCompression nopreserveHFSCompression nocache"
    )) | {"arch": _R, "bom": _R, "zlibCompressionLevel": _R, "password": NONE},
    abbreviations=False,
)
GZIP = Grammar(
    flags="cdfhklLnNqrtvV123456789", valued="S",
    longs=_names(NONE, (
        "stdout to-stdout decompress uncompress force help keep list license no-name name "
        "quiet recursive rsyncable test verbose version fast best synchronous"
    )) | {"suffix": _R},
    aliases={"r": "recursive"},
)
#: Info-ZIP zip(1) options that take the next word; -x/-i take a list (up to the next option).
_ZIP_VALUED = frozenset({"b", "n", "t", "tt", "P", "Z", "s", "sp", "O", "TT", "sc", "ds",
                         "ic", "la", "lf", "li", "lu"})
_ZIP_LISTS = frozenset({"x", "i"})


def _coreutils(argv: Sequence[Word], program: str, grammar: Grammar) -> Carried:
    """cp, mv, ln, install: ``SRC... DEST``, ``-t DIR SRC...``, ``-T SRC DEST``."""
    parsed = parse(argv, grammar)
    if parsed.problem is not None:
        return Carried(program, problem=parsed.problem)
    if program == "install" and parsed.flag("directory"):
        return Carried(program, destinations=parsed.operands)  # `install -d DIR...`
    operands = list(parsed.operands)
    directory = parsed.value("target-directory")
    if directory is not None:
        sources, destination = operands, directory
    elif len(operands) >= 2:
        sources, destination = operands[:-1], operands[-1]
    elif len(operands) == 1 and program == "ln":
        sources, destination = operands, _word(".")  # `ln TARGET`: a link in the cwd
    else:
        return Carried(program)
    follows = program == "cp" and parsed.flag("dereference")
    if program == "ln" and parsed.flag("symbolic") and not parsed.flag("relative"):
        sources = _link_targets(sources, destination, directory is not None)
    return Carried(program, tuple(sources), (destination,), follows=follows)


def _link_targets(targets: Sequence[Word], link: Word, into: bool) -> list[Word]:
    """``ln -s TARGET LINK``: a relative TARGET is read from the link's directory (LINK
    itself when it is a directory, else its parent): both readings are carried."""
    out: list[Word] = []
    link_value = link.value
    for target in targets:
        value = target.value
        if value is None or link_value is None or value.startswith("/") or target.tilde:
            out.append(target)
            continue
        bases = {link_value}
        if not into and len(targets) == 1 and not link_value.endswith("/"):
            bases.add(posixpath.dirname(link_value.rstrip("/")) or ".")
        for base in sorted(bases):
            joined = posixpath.join(base, value)
            out.append(Word(joined, joined, target.glob, link.tilde))
    return out


def _remote(word: Word) -> bool:
    """``host:path`` or ``rsync://``: a file on another machine (or this one, over ssh)."""
    text = word.value or ""
    head = text.split("/", 1)[0]
    return "::" in text or text.startswith("rsync://") or (":" in head and not word.tilde)


def _rsync_like(argv: Sequence[Word], program: str, grammar: Grammar) -> Carried:
    """rsync and scp: every operand but the last is a source; the last is where it goes."""
    parsed = parse(argv, grammar)
    if parsed.problem is not None:
        return Carried(program, problem=parsed.problem)
    if parsed.flag("files-from"):
        return Carried(program, problem="--files-from names the files in another file")
    operands = parsed.operands
    if len(operands) < 2:
        return Carried(program)  # (one operand: rsync lists it, scp fails)
    sources, destination = operands[:-1], operands[-1]
    remote = [w.raw for w in sources if _remote(w)]
    if remote:
        return Carried(program, problem=f"{remote[0]} is a remote source toolrun cannot see")
    follows = program == "rsync" and (
        parsed.flag("copy-links") or parsed.flag("copy-dirlinks"))
    destinations = () if _remote(destination) else (destination,)
    return Carried(program, tuple(sources), destinations, follows=follows)


def _tar(argv: Sequence[Word], program: str) -> Carried:
    """tar: the members of a created archive are read (from the ``-C`` directory current
    where each is named); the archive (``-f``) is written; extraction writes below ``-C``."""
    words = list(argv)
    if len(words) > 1 and words[1].value and not words[1].value.startswith("-"):
        # The traditional form, `tar cf ARCHIVE MEMBER...`: the first word is a bundle of
        # letters, and the letters that take a value take the next words in order.
        rest = words[2:]
        spelled: list[Word] = []
        for letter in words[1].value:
            spelled.append(_word("-" + letter))
            if letter in TAR.valued:
                if not rest:
                    return Carried(program, problem=f"-{letter} needs a value")
                spelled.append(rest.pop(0))
        words = [words[0], *spelled, *rest]
    parsed = parse(words, TAR)
    if parsed.problem is not None:
        return Carried(program, problem=parsed.problem)
    if parsed.flag("files-from"):
        return Carried(program, problem="-T/--files-from names the members in another file")
    base: Word | None = None
    members: list[Word] = []
    for name, value in parsed.events:
        if name == "directory" and value is not None:
            base = value if base is None else _joined(base, value)
        elif name == "" and value is not None:
            members.append(_joined(base, value))
    archive = parsed.value("file")
    written = () if archive is None or archive.value == "-" else (archive,)
    follows = parsed.flag("dereference")
    if parsed.flag("create") or parsed.flag("append") or parsed.flag("update"):
        return Carried(program, tuple(members), written, follows=follows)
    if parsed.flag("extract") and not parsed.flag("to-stdout") and not parsed.flag("to-command"):
        # (the members written are in the archive: the directory is what can be checked)
        return Carried(program, (), (base if base is not None else _word("."),))
    return Carried(program)


def _joined(base: Word | None, member: Word) -> Word:
    if base is None or member.value is None or member.value.startswith("/"):
        return member
    if base.value is None:
        return Word(member.raw, None)
    joined = posixpath.join(base.value, member.value)
    return Word(joined, joined, member.glob, base.tilde)


def _zip(argv: Sequence[Word], program: str) -> Carried:
    """Info-ZIP zip: ``zip [options] ARCHIVE [FILE...]``; -x/-i take a list of patterns."""
    operands: list[Word] = []
    outputs: list[Word] = []
    words = list(argv[1:])
    i = 0
    in_list = False
    follows = True  # zip stores what a symlink points to, unless -y
    while i < len(words):
        word = words[i]
        i += 1
        text = word.value
        if text is None:
            return Carried(program, problem=f"{word.raw} is only known when the command runs")
        if in_list and not text.startswith("-") and text != "@":
            continue  # a pattern of -x/-i
        in_list = False
        if text == "--":
            operands += words[i:]
            break
        if not text.startswith("-") or text == "-":
            operands.append(word)
            continue
        option = text[1:]
        if option.startswith("-"):
            name = option[1:]
            if name == "symlinks":
                follows = False
                continue
            if name in ("recurse-paths", "quiet", "verbose", "test", "move", "junk-paths",
                        "encrypt", "update", "freshen", "filesync", "grow"):
                continue
            return Carried(program, problem=f"zip option --{name} is not known to toolrun")
        if option in _ZIP_VALUED:
            if option == "TT":
                return Carried(program, problem="zip -TT runs a command")
            if option == "O" and i < len(words):
                outputs.append(words[i])
            i += 1
            continue
        if option in _ZIP_LISTS:
            in_list = True
            continue
        if "@" in option:
            return Carried(program, problem="zip -@ reads the names of the files from stdin")
        if "R" in option:
            return Carried(program, problem="zip -R walks the working directory for patterns")
        if not all(c in "0123456789rqvTmjyeufFAcdDgklLoSwXz$" for c in option):
            return Carried(program, problem=f"zip option -{option} is not known to toolrun")
        if "y" in option:
            follows = False
    if not operands:
        return Carried(program)
    archive, sources = operands[0], operands[1:]
    return Carried(program, tuple(sources), (archive, *outputs), follows=follows)


def _git(argv: Sequence[Word]) -> Carried | None:
    """``git [-C DIR] mv SRC... DEST``: a move inside the repository (and its index)."""
    words = list(argv[1:])
    base: Word | None = None
    while words and (words[0].value or "").startswith("-"):
        text = words[0].value or ""
        if text == "-C" and len(words) > 1:
            base = words[1] if base is None else _joined(base, words[1])
            words = words[2:]
        elif text in _GIT_PLAIN:
            words = words[1:]
        else:
            return None  # other global options: git's own reader decides the command
    if not words or words[0].value != "mv":
        return None
    carried = _coreutils([_word("git mv"), *words[1:]], "git mv", GIT_MV)
    if base is None:
        return carried
    return Carried(
        "git mv",
        tuple(_joined(base, w) for w in carried.sources),
        tuple(_joined(base, w) for w in carried.destinations),
        problem=carried.problem,
    )


def _cpio(argv: Sequence[Word], program: str) -> Carried:
    for word in argv[1:]:
        text = word.value
        if text is None:
            return Carried(program, problem=f"{word.raw} is only known when the command runs")
        if text in ("--create", "--pass-through") or (
            text.startswith("-") and not text.startswith("--") and ("o" in text or "p" in text)
        ):
            return Carried(program, problem="cpio reads the names of the files it copies "
                           "from stdin")
    return Carried(program)


def _recursive_compressor(argv: Sequence[Word], program: str) -> Carried | None:
    """``zstd -r DIR`` / ``lz4 -r DIR`` write ``F.zst`` beside every file of the tree, a
    name no Read rule of ``F`` covers (``zstd -dc config/.env.zst`` prints it). Their
    options are many; every word that is not an option (or -o/-D's value) counts as a
    source, which can only check more than is carried."""
    sources: list[Word] = []
    recursive = False  # (-r walks trees: links inside are followed, as gzip -r does)
    skip = False
    for word in argv[1:]:
        text = word.value
        if text is None:
            return Carried(program, problem=f"{word.raw} is only known when the command runs")
        if skip:
            skip = False
            continue
        if text == "--recursive" or (text.startswith("-") and not text.startswith("--")
                                     and "r" in text[1:]):
            recursive = True
        if text in ("-o", "-D", "--output-dir-flat", "--output-dir-mirror"):
            skip = True
        elif text.startswith("--filelist"):
            return Carried(program, problem=f"{program} reads the names it compresses from "
                           "a file")
        elif not text.startswith("-") or text == "-":
            sources.append(word)
    # (a single file is carried too: `zstd config/.env` leaves config/.env.zst)
    return Carried(program, tuple(sources), follows=recursive)


_PROGRAMS = frozenset({"cp", "mv", "ln", "install", "rsync", "scp", "tar", "gtar", "bsdtar",
                       "zip", "ditto", "git", "cpio", "gzip", "pigz", "zstd", "lz4"})


def is_copier(name: str | None) -> bool:
    """A quick pre-check: ``name`` is a program this module knows (``git`` only for mv)."""
    if name is None:
        return False
    return (posixpath.basename(name) if "/" in name else name) in _PROGRAMS


def carried(argv: Sequence[Word]) -> Carried | None:
    """What ``argv`` copies, moves, links or archives, and where; None if it is no copy."""
    if not argv or argv[0].value is None:
        return None
    program = posixpath.basename(argv[0].value)
    if program in ("cp", "mv", "ln", "install"):
        grammar = {"cp": CP, "mv": MV, "ln": LN, "install": INSTALL}[program]
        return _coreutils(argv, program, grammar)
    if program == "rsync":
        return _rsync_like(argv, program, RSYNC)
    if program == "scp":
        return _rsync_like(argv, program, SCP)
    if program in ("tar", "gtar", "bsdtar"):
        return _tar(argv, program)
    if program == "zip":
        return _zip(argv, program)
    if program == "ditto":
        parsed = parse(argv, DITTO)
        if parsed.problem is not None:
            return Carried(program, problem=parsed.problem)
        if len(parsed.operands) < 2:
            return Carried(program)
        return Carried(program, parsed.operands[:-1], parsed.operands[-1:], follows=True)
    if program == "git":
        return _git(argv)
    if program == "cpio":
        return _cpio(argv, program)
    if program in ("zstd", "lz4"):
        return _recursive_compressor(argv, program)
    if program in ("gzip", "pigz"):
        parsed = parse(argv, GZIP)
        if parsed.problem is not None:
            return Carried(program, problem=parsed.problem)
        if not parsed.flag("recursive"):
            return None  # single files: already plain reads of the file command
        return Carried(program, parsed.operands)
    return None


#: How many symlinked directories a following copy is checked through.
MAX_LINKED_TREES = 64


def linked_trees(root: str) -> tuple[str, ...]:
    """The directories that symlinks inside the tree at ``root`` lead to (resolved), for a
    copy that follows links (``cp -L``, ``rsync -L``, ``tar -h``, zip): it carries what
    they hold too. Walked breadth-first, each tree once; the tuple ends with ``""`` when
    there were more than :data:`MAX_LINKED_TREES` (the caller then asks)."""
    import os

    seen = {os.path.realpath(root)}
    queue = [root]
    found: list[str] = []
    entries = 0
    while queue:
        top = queue.pop(0)
        for directory, dirs, files in os.walk(top):
            entries += len(dirs) + len(files)
            if entries > 5000:
                return (*found, "")
            for name in dirs:
                path = posixpath.join(directory, name)
                if not os.path.islink(path):
                    continue
                real = os.path.realpath(path)
                if real in seen or not os.path.isdir(real):
                    continue
                if len(found) >= MAX_LINKED_TREES:
                    return (*found, "")
                seen.add(real)
                found.append(real)
                queue.append(real)
    return tuple(found)
