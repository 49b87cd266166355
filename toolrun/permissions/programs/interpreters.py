"""Interpreters given their program inline (``python -c``, ``perl -e``, ``node -e``, ``watch``).

The inline program can do anything (``os.system("rm x")``); toolrun does not read
other languages, so such a command cannot be analysed: no rule allows it, and under
bypassPermissions it asks while a Bash deny or ask rule exists.
"""

from __future__ import annotations

import re

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
NAMES = frozenset({*INLINE, *_SHELL_STRING, "python", "python3", "pypy3", "su", "runuser", "env"})

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
    if name == "env" and any(
        w.value is None
        or w.value.startswith(("-S", "--split-string"))
        or (w.value.startswith("-") and not w.value.startswith("--") and "S" in w.value)
        for w in argv[1:]
    ):
        return "env -S splits a string into a command line"
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
