"""The environment a Bash call's shell starts with: toolrun's, minus what steers the shell.

Like Claude Code, which builds its shell's environment itself rather than handing over
whatever it inherited, toolrun drops the variables that make ``bash -c`` run code the
command does not show, or read the command differently from the permission engine:

- code run at start-up or around commands: ``BASH_ENV``, ``ENV``, ``PROMPT_COMMAND``,
  ``PS0``-``PS4`` (``PS4`` is expanded, command substitutions included, under ``set -x``),
  and exported functions (``BASH_FUNC_name%%``: an exported ``cd`` or ``ls`` would run
  instead of the builtin or the program);
- options imported at start-up: ``SHELLOPTS``, ``BASHOPTS``, ``POSIXLY_CORRECT``,
  ``BASH_COMPAT``;
- where words and paths lead: ``CDPATH`` (``cd outside`` could leave the workspace),
  ``OLDPWD`` (``cd -``), ``PWD`` (bash keeps an inherited ``PWD`` that reaches the working
  directory through a symlink, and ``cd ..`` then climbs the symlink's parents), ``IFS``,
  ``GLOBIGNORE``, ``EXECIGNORE``, ``BASH_LOADABLES_PATH``;
- the rest that changes what a command does or prints: ``BASH_XTRACEFD``, ``TMOUT``,
  ``TIMEFORMAT``, ``HISTFILE``, ``INPUTRC``.

Everything else (``PATH``, ``HOME``, locales, tool settings) passes unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: Dropped from the environment of every Bash call (documented in the README).
DROPPED = frozenset(
    {
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "PS0",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "POSIXLY_CORRECT",
        "BASH_COMPAT",
        "CDPATH",
        "OLDPWD",
        "PWD",
        "IFS",
        "GLOBIGNORE",
        "EXECIGNORE",
        "BASH_LOADABLES_PATH",
        "BASH_XTRACEFD",
        "TMOUT",
        "TIMEFORMAT",
        "HISTFILE",
        "INPUTRC",
    }
)
#: Exported functions: ``BASH_FUNC_name%%`` (and the older ``BASH_FUNC_name()`` form).
FUNCTION_PREFIX = "BASH_FUNC_"


def shell_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the variables that steer the shell (a new dict each call)."""
    # Built once per distinct environment, not per call: walking os.environ decodes
    # every name and value again, and cost about a tenth of a millisecond a call.
    source = _snapshot(env)
    cached = _last
    if source is not None and cached is not None and cached[0] == source:
        return dict(cached[1])
    clean = {
        name: value
        for name, value in env.items()
        if name not in DROPPED and not name.startswith(FUNCTION_PREFIX)
    }
    if source is not None:
        _remember((dict(source), clean))
    return dict(clean)


_Snapshot = Mapping[bytes, bytes] | Mapping[str, str]
_last: tuple[_Snapshot, dict[str, str]] | None = None


def _remember(entry: tuple[_Snapshot, dict[str, str]]) -> None:
    global _last
    _last = entry


def _snapshot(env: Mapping[str, str]) -> _Snapshot | None:
    """What ``env`` holds, in a form that compares in C: the encoded table behind
    os.environ (which changes with every ``os.environ[...] =``), or a plain dict."""
    if env is os.environ:
        return os.environ._data  # type: ignore[attr-defined,no-any-return]
    if type(env) is dict:
        return env
    return None  # some other mapping: built every time
