"""Interpreters given their program inline (``python -c``, ``perl -e``, ``node -e``, ``watch``)
or fed by the command itself (``perl <<< CODE``, ``cat x | node``, ``make -f /dev/stdin``).

The program can do anything (``os.system("rm x")``); toolrun does not read other
languages, so such a command cannot be analysed: no rule allows it, and under
bypassPermissions it asks while a Bash deny or ask rule exists. A program read from a
file (``python3 tool.py``) is analysable, like ``bash script.sh``.

How each program finds its program text is a property of the program (:data:`READERS`),
not a list in the resolver: where its script operand stands, which options name the
program file, whether it reads commands from standard input whatever its operands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolrun.permissions.programs.streams import any_stream, is_stream
from toolrun.permissions.words import Word

_PYTHON = re.compile(r"(python|pypy)[0-9.]*")
#: Interpreter -> options that take the program text.
INLINE: dict[str, frozenset[str]] = {
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "node": frozenset({"-e", "--eval", "-p", "--print"}),
    "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}),
    "deno": frozenset({"eval"}),
    "php": frozenset({"-r", "-B", "-R", "-E"}),
    "lua": frozenset({"-e"}),
    "luajit": frozenset({"-e"}),
    "Rscript": frozenset({"-e"}),
    "osascript": frozenset({"-e"}),
    "tclsh": frozenset(),
    "julia": frozenset({"-e", "--eval", "-E", "--print"}),
    "jshell": frozenset(),
    "R": frozenset({"-e"}),
    "expect": frozenset({"-c"}),
    "dc": frozenset({"-e", "--expression"}),
    "gdb": frozenset({"-ex", "--eval-command", "-iex", "--init-eval-command"}),
    "psql": frozenset({"-c", "--command"}),
    "mysql": frozenset({"-e", "--execute"}),
    "sqlite3": frozenset({"-cmd"}),
    "make": frozenset({"-E", "--eval"}),
    "gmake": frozenset({"-E", "--eval"}),
}
#: Interpreter options whose next word is their value (the script comes after them).
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "python": frozenset({"-W", "-X", "-Q"}),
    "perl": frozenset({"-I", "-M", "-m", "-x", "-C", "-l", "-0"}),
    "node": frozenset(
        {"-r", "--require", "--import", "--loader", "-C", "--conditions", "--input-type", "--title"}
    ),
    "nodejs": frozenset({"-r", "--require", "--import", "--loader"}),
    "ruby": frozenset({"-I", "-r", "-C", "-E", "-F"}),
    "php": frozenset({"-c", "-d", "-z"}),
    "lua": frozenset({"-l"}),
}
#: Programs that hand a string to ``sh -c``.
_SHELL_STRING = frozenset({"watch", "script"})


@dataclass(frozen=True, slots=True)
class Reader:
    """Where a program finds its program text.

    ``values``: options whose next word is their value (not the script). ``files``:
    options whose value is the program file (``make -f``, ``php -f``, ``R --file``).
    ``no_script``: options after which no program text is read (``python -m``,
    ``--version``). ``stdin``: with no script operand (and no ``files`` option) the
    program runs its standard input. ``commands``: it reads commands from standard
    input whatever its operands are (``ed FILE``, ``sqlite3 DB``, ``at now``).
    ``operand``: its first operand is the program file.
    """

    values: frozenset[str] = frozenset()
    files: frozenset[str] = frozenset()
    no_script: frozenset[str] = frozenset({"-V", "-v", "--version", "-h", "--help"})
    stdin: bool = True
    commands: bool = False
    operand: bool = True
    #: ``+O extglob`` is an option as ``-O`` is (the shells).
    plus: bool = False
    #: getopt bundles (``-sf-``); False for programs whose options are whole words after
    #: one dash (``gdb -batch``, ``emacs -batch``, ``pwsh -NoProfile``).
    bundles: bool = True


_SCRIPTED = Reader()
#: The shells toolrun's walker does not know by name (forms.SHELLS): ``tcsh <<< 'rm f'``
#: runs its input; ``-o``/``-O`` and their ``+`` forms take a value (the script comes after).
_SHELL_VALUES = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_OTHER_SHELL = Reader(values=_SHELL_VALUES, plus=True)
_OTHER_SHELLS = ("tcsh", "csh", "ksh93", "ksh88", "pdksh", "lksh", "oksh", "loksh", "yash",
                 "posh", "bosh", "hush", "rc", "es", "elvish", "nu", "xonsh", "osh", "ysh",
                 "oil", "ion", "murex")
#: Editors that read their commands (keystrokes, Ex lines) from a standard input that is not
#: a terminal (vim's "Input is not from a terminal"), and load scripts with -s/-S/-u.
_EDITOR = Reader(files=frozenset({"-s", "-S", "-u", "-U", "-W", "-w"}), commands=True,
                 operand=False, no_script=frozenset({"--version", "-h", "--help"}))
_EDITORS = ("vim", "vi", "nvim", "gvim", "view", "vimdiff", "rvim", "evim", "nvi", "elvis",
            "vile")
#: Interpreters and REPLs that run their standard input when given no script.
_REPLS = (
    "ipython", "ipython3", "bpython", "ptpython", "guile", "racket", "sbcl", "clisp", "ecl",
    "ccl", "runghc", "runhaskell", "ocaml", "utop", "elixir", "clojure", "clj", "bb", "scala",
    "amm", "kotlin", "kotlinc", "swift", "gnuplot", "octave", "maxima", "gp", "sage", "groovy",
    "groovysh", "jrunscript", "qjs", "rhino", "jjs", "pike", "picolisp", "chibi-scheme", "csi",
    "gosh", "chez", "scheme", "petite", "hy",
)
#: Programs that read commands from standard input whatever their operands (`!cmd` in ftp).
_COMMAND_READERS = ("ghci", "erl", "iex", "pry", "mongosh", "mongo", "duckdb", "ftp", "lftp",
                    "tnftp", "sftp", "gdb-multiarch", "cdb", "sqlplus", "isql")
#: Python modules that read what to run from standard input (a REPL or a debugger):
#: ``python3 -m code <<< 'import os; ...'`` is ``python3 <<< CODE``.
REPL_MODULES = frozenset({"code", "pdb", "asyncio", "IPython", "ptpython", "bpython",
                          "idlelib", "pydoc"})
_COMMANDS = Reader(commands=True, operand=False)
_WORDS = Reader(commands=True, operand=False, bundles=False)
READERS: dict[str, Reader] = {
    "python": Reader(values=frozenset({"-W", "-X", "-Q"}),
                     no_script=frozenset({"-m", "-V", "--version", "-h", "--help"})),
    "perl": Reader(values=frozenset({"-I", "-M", "-m"})),
    "ruby": Reader(values=frozenset({"-I", "-r", "-C", "-E", "-F"})),
    "irb": _COMMANDS,
    "node": Reader(values=frozenset({"-r", "--require", "--import", "--loader", "-C",
                                     "--conditions", "--input-type", "--title"})),
    "nodejs": Reader(values=frozenset({"-r", "--require", "--import", "--loader"})),
    "php": Reader(values=frozenset({"-c", "-d", "-z"}), files=frozenset({"-f", "--file"}),
                  no_script=frozenset({"-S", "-l", "-v", "-h", "-i", "-m", "--version"})),
    "lua": Reader(values=frozenset({"-l"})),
    "luajit": Reader(values=frozenset({"-l"})),
    "Rscript": _SCRIPTED,
    # R ignores its operands: without --file it runs its standard input.
    "R": Reader(files=frozenset({"-f", "--file"}), operand=False,
                no_script=frozenset({"CMD", "--version", "-h", "--help"})),
    "tclsh": _SCRIPTED,
    "wish": _SCRIPTED,
    "expect": Reader(files=frozenset({"-f"})),
    "osascript": _SCRIPTED,
    "julia": _SCRIPTED,
    "jshell": _COMMANDS,
    "deno": _SCRIPTED,
    "bun": _SCRIPTED,
    "dc": Reader(files=frozenset({"-f", "--file"})),
    "ed": _COMMANDS,
    "red": _COMMANDS,
    "ex": _COMMANDS,
    "gdb": Reader(files=frozenset({"-x", "--command"}), commands=True, operand=False,
                  bundles=False),
    "sqlite3": _WORDS,
    "psql": Reader(files=frozenset({"-f", "--file"}), commands=True, operand=False),
    "mysql": _COMMANDS,
    "at": Reader(files=frozenset({"-f"}), commands=True, operand=False),
    "batch": Reader(files=frozenset({"-f"}), commands=True, operand=False),
    "crontab": Reader(no_script=frozenset({"-l", "-r", "-e", "-h", "--help"})),
    "m4": _SCRIPTED,
    # make reads ./Makefile when no -f is given: a file, not its input.
    "make": Reader(files=frozenset({"-f", "--file", "--makefile"}), stdin=False,
                   operand=False),
    "gmake": Reader(files=frozenset({"-f", "--file", "--makefile"}), stdin=False,
                    operand=False),
    # -- found by the red team of issue 24: each reads its program from what it is fed --
    **dict.fromkeys(_OTHER_SHELLS, _OTHER_SHELL),
    **dict.fromkeys(_EDITORS, _EDITOR),
    # emacs --script FILE / -l FILE: a program file (`/dev/stdin` is the command's input)
    "emacs": Reader(files=frozenset({"--script", "-script", "-l", "--load", "-scriptload",
                                     "-x"}), stdin=False, operand=False, bundles=False),
    # pwsh -File - / -Command - and a redirected input: commands from standard input
    **dict.fromkeys(("pwsh", "powershell", "pwsh-preview"), Reader(
        files=frozenset({"-File", "-f", "-file", "-Command", "-c", "-command"}),
        commands=True, bundles=False)),
    **dict.fromkeys(_REPLS, _SCRIPTED),
    **dict.fromkeys(_COMMAND_READERS, _COMMANDS),
    "lldb": Reader(files=frozenset({"-s", "--source", "-S", "--source-before-file"}),
                   commands=True, operand=False),
    "cmake": Reader(files=frozenset({"-P", "-C"}), stdin=False, operand=False),
    "ninja": Reader(files=frozenset({"-f"}), stdin=False, operand=False),
    "just": Reader(files=frozenset({"-f", "--justfile"}), stdin=False, operand=False),
    "rake": Reader(files=frozenset({"-f", "--rakefile"}), stdin=False, operand=False),
    "bmake": Reader(files=frozenset({"-f"}), stdin=False, operand=False),
    "remake": Reader(files=frozenset({"-f", "--file", "--makefile"}), stdin=False,
                     operand=False),
}
#: deno and bun take their script after a sub-command (``deno run -``); with none but
#: ``repl`` they read standard input as a REPL.
_SUBCOMMANDS = {"deno": frozenset({"run", "repl"}), "bun": frozenset({"run", "repl"})}
_SCRIPT_SUFFIXES = (".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx")
#: Package runners: the program they start is the rest of the line (``npm exec -- node``).
_RUNNERS = {"npm": frozenset({"exec", "x"}), "pnpm": frozenset({"exec", "dlx"}),
            "yarn": frozenset({"exec", "dlx", "node"})}
#: Package-runner options that run a shell string (``npm exec -c 'rm f'``).
_RUNNER_SHELL = frozenset({"-c", "--call", "--shell-mode"})
#: The versioned names an interpreter is installed under (``python3.12``, ``pypy3.10``).
_VERSIONED = frozenset(
    {"python", "python2", "python2.7", "python3", "pypy", "pypy3",
     *(f"python3.{minor}" for minor in range(4, 20)),
     *(f"pypy3.{minor}" for minor in range(6, 16))}
)  # fmt: skip
NAMES = frozenset({*INLINE, *_SHELL_STRING, *READERS, *_RUNNERS, *_VERSIONED, "su", "runuser",
                   "env", "parallel", "man"})

#: Options and start-up code interpreters take from the environment (perlrun(1) PERL5OPT,
#: ruby(1) RUBYOPT, node(1) NODE_OPTIONS --require, python(1) PYTHONSTARTUP, lua(1)
#: LUA_INIT, the JVM's JAVA_TOOL_OPTIONS -javaagent). Search paths (PYTHONPATH) name
#: files of code, as a script argument does, and are not listed (envcode reads this).
CODE_ENV = frozenset(
    {"PERL5OPT", "PERL5DB", "RUBYOPT", "NODE_OPTIONS", "PYTHONSTARTUP", "LUA_INIT*",
     "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "PHP_INI_SCAN_DIR", "PHPRC"}
)  # fmt: skip
#: NODE_OPTIONS / RUBYOPT / PERL5OPT words that only tune the runtime.
_TUNING = re.compile(
    r"--(max-old-space-size|max-semi-space-size|stack-size|stack-trace-limit)=\d+"
    r"|--(enable-source-maps|no-warnings|trace-warnings|trace-deprecation|no-deprecation"
    r"|experimental-vm-modules|openssl-legacy-provider|trace-uncaught)"
    r"|--(unhandled-rejections|dns-result-order)=[a-z0-9-]+"
    r"|-W[0-2]?|-w|-[wWX]+"
)


def harmless_env(name: str, value: str, _env: object) -> bool:
    """``NODE_OPTIONS=--max-old-space-size=4096``, ``RUBYOPT=-W0``: runs nothing new."""
    if name in ("NODE_OPTIONS", "RUBYOPT", "PERL5OPT"):
        return all(_TUNING.fullmatch(w) for w in value.split())
    return False


def _name(argv: tuple[Word, ...]) -> str:
    value = argv[0].value or ""
    return value.rsplit("/", 1)[-1]


def runs_code(argv: tuple[Word, ...]) -> str | None:
    name = _name(argv)
    if name in _SHELL_STRING and len(argv) > 1:
        return f"{name} runs its arguments as a shell command string"
    if name == "parallel":
        # (its arguments, or its input, are shell command lines: `parallel ::: 'rm f'`)
        return "parallel runs its arguments or its input as shell commands"
    if name in _RUNNERS:
        return _runner(argv, None)
    if name == "sqlite3" and len([w for w in argv[1:] if not w.text.startswith("-")]) > 1:
        # `sqlite3 DB '.shell rm f'`: the operands after the database are input lines
        return "sqlite3 runs the SQL and dot-commands given after the database"
    if name == "env" and any(
        w.value is None
        or w.value.startswith(("-S", "--split-string"))
        or (w.value.startswith("-") and not w.value.startswith("--") and "S" in w.value)
        for w in argv[1:]
    ):
        return "env -S splits a string into a command line"
    if name == "man" and any(
        w.value is None or w.value.startswith(("-P", "--pager", "-H", "--html"))
        for w in argv[1:]
    ):
        # (`man -P 'rm -rf x' ls`: man hands its pager, or -H's browser, to sh)
        return "man -P/-H runs its value as a shell command"
    if name in ("su", "runuser") and any(w.value in ("-c", "--command") for w in argv[1:]):
        return f"{name} -c runs a string as a shell command"
    flags = INLINE.get(name)
    if _PYTHON.fullmatch(name):
        flags = frozenset({"-c"})
    if flags is None:
        return None
    takes_value = _VALUE_OPTIONS.get("python" if _PYTHON.fullmatch(name) else name, frozenset())
    skip = False
    for word in argv[1:]:
        text = word.value
        if skip:  # the value of `-W ignore`, `-r module`: not the script
            skip = False
            continue
        if text is None:
            return f"{name} argument {word.raw} is only known when the command runs"
        if text in takes_value:
            skip = True
            continue
        if text in flags or (
            text.startswith("-")
            and not text.startswith("--")
            and any(f"-{c}" in flags for c in text[1:])
        ):
            return f"{name} {text} runs a program given inline"
        if text.startswith("--") and text.split("=", 1)[0] in flags:
            return f"{name} {text} runs a program given inline"
        if not text.startswith("-"):
            break
    return None


def reads_program(argv: tuple[Word, ...], stdin: bool) -> str | None:
    """Why ``argv`` runs program text the command feeds it (see the package docstring)."""
    name = _name(argv)
    if name in _RUNNERS:
        return _runner(argv, stdin)
    reader = READERS.get("python" if _PYTHON.fullmatch(name) else name)
    if reader is None:
        return None
    words = argv[1:]
    subcommands = _SUBCOMMANDS.get(name)
    if subcommands is not None and words and words[0].value in subcommands:
        if words[0].value == "repl":
            return f"{name} repl runs its standard input" if stdin else None
        words = words[1:]
    elif (
        subcommands is not None
        and words
        and not (words[0].value or "-").startswith("-")
        and not (words[0].value or "").endswith(_SCRIPT_SUFFIXES)
    ):
        return None  # `deno fmt`, `bun install`: a sub-command, not a script
    fed = "its standard input" if stdin else "a stream"
    operand: Word | None = None
    file_given = False
    i = 0
    while i < len(words):
        word = words[i]
        text = word.value
        if text is None or word.glob:
            return f"{name} argument {word.raw} is only known when the command runs"
        if text in reader.no_script and not (len(text) == 2 and text[0] == "-"):
            return None  # (a short one is read letter by letter: `-m code` is a REPL)
        if text == "--":
            operand = words[i + 1] if i + 1 < len(words) else None
            break
        if not _is_option(text, reader):
            operand = word
            break
        step = _option(name, reader, words, i, fed, stdin)
        if isinstance(step, str):
            return step
        if step is None:
            return None
        taken, names_file = step
        file_given = file_given or names_file
        i += taken
    if reader.commands and stdin:
        return f"{name} runs the commands on its standard input"
    if reader.operand and operand is not None:
        if is_stream(operand):
            return f"{name} {operand.raw} runs the program in {fed}"
        return None
    if reader.stdin and stdin and not file_given:
        return f"{name} with no script runs the program on its standard input"
    stream = any_stream(words) if reader.operand else None
    if stream is not None and stream.value == "-" and operand is None:
        return f"{name} - runs the program in {fed}"
    return None


def _is_option(text: str, reader: Reader) -> bool:
    return (text.startswith("-") and text != "-") or (
        reader.plus and text.startswith("+") and text != "+"
    )


def _long_match(text: str, names: frozenset[str]) -> str | None:
    """The option of ``names`` that ``--opt[=v]`` spells, a unique prefix included
    (getopt_long: ``make --mak=/dev/stdin`` is ``--makefile``)."""
    option = text.split("=", 1)[0]
    if option in names:
        return option
    if not option.startswith("--") or len(option) < 3:
        return None
    found = [n for n in names if n.startswith(option)]
    return found[0] if len(found) == 1 else None


def _option(
    name: str, reader: Reader, words: tuple[Word, ...], i: int, fed: str, stdin: bool
) -> tuple[int, bool] | str | None:
    """One option word as getopt reads it: (words it takes, whether it names the program
    file), why it runs fed text, or None when no program text is read after it."""
    text = words[i].value or ""
    after = words[i + 1] if i + 1 < len(words) else None
    if text.startswith("--") or text in reader.files or text in reader.values:
        # a long option, or one the table names whole (`-ex`, `-cmd`, `-Command`)
        option = _long_match(text, reader.files)
        if option is not None:
            glued = "=" in text
            value = _tail(text, text.index("=") + 1) if glued else after
            if value is not None and is_stream(value):
                return f"{name} {option} {value.raw} runs a program the command feeds it"
            return (1 if glued else 2), True
        option = _long_match(text, reader.values)
        if option is not None and "=" not in text:
            if after is not None and is_stream(after):
                return f"{name} {text} {after.raw} loads code the command feeds it"
            return 2, False
        return 1, False
    if not reader.bundles:
        return 1, False
    # A bundle of short options (`-sf-`, `-Wignore`, `-um code`): getopt reads letter by
    # letter; a letter that takes a value takes the rest of the word, or the next word.
    sign = text[0]
    for k, letter in enumerate(text[1:], start=1):
        short = sign + letter
        if short in reader.no_script:
            if name.startswith(("python", "pypy")) and letter == "m":
                module = text[k + 1 :] or (after.value if after is not None else "") or ""
                if module.split(".", 1)[0] in REPL_MODULES and stdin:
                    return f"{name} -m {module} runs the program on {fed}"
            return None
        if short in reader.files or short in reader.values:
            rest = text[k + 1 :]
            value = _tail(rest, 0) if rest else after
            if value is not None and is_stream(value):
                kind = "runs a program" if short in reader.files else "loads code"
                return f"{name} {short} {value.raw} {kind} the command feeds it"
            return (1 if rest else 2), short in reader.files
    return 1, False


def _tail(text: str, start: int) -> Word:
    return Word(text[start:], text[start:])


def _runner(argv: tuple[Word, ...], stdin: bool | None) -> str | None:
    """``npm exec [--] PROG ...``: the program it starts decides (``stdin`` None: whether the
    runner or the program runs a string inline)."""
    from toolrun.permissions import programs

    name = _name(argv)
    words = argv[1:]
    verbs = _RUNNERS[name]
    for i, word in enumerate(words):
        text = word.value
        if text is None:
            return f"{name} argument {word.raw} is only known when the command runs"
        if text.split("=", 1)[0] in _RUNNER_SHELL:
            return f"{name} {text} runs a shell command string"
        if text in verbs:
            rest = words[i + 1 :]
            while rest and (rest[0].value or "").startswith("-"):
                if rest[0].value == "--":
                    rest = rest[1:]
                    break
                if (rest[0].value or "").split("=", 1)[0] in _RUNNER_SHELL:
                    return f"{name} {rest[0].value} runs a shell command string"
                rest = rest[1:]
            if text == "node":
                rest = (Word("node", "node"), *rest)
            if not rest:
                return None
            if stdin is None:
                return programs.runs_code(rest)
            return programs.reads_program(rest, stdin)
        if not text.startswith("-"):
            return None  # `npm test`, `yarn build`: a script of package.json
    return None
