"""Tilde expansion, the way bash does it: the one place that knows what ``~...`` names.

The permission engine and the tools both call :func:`expand_tilde`, so the path that
is decided and the path that is opened cannot disagree on a tilde prefix (a tool that
expanded ``~root/x`` while the engine read it as ``<workspace>/~root/x`` was a hole).

Bash expands the *tilde prefix* of a word: the characters from a leading unquoted ``~``
up to the first ``/``. ``~`` is ``$HOME``, ``~user`` that user's home, ``~+`` ``$PWD``,
``~-`` ``$OLDPWD``; ``~N``, ``~+N`` and ``~-N`` index the directory stack. A prefix that
names no user is left as it is (a relative path starting with ``~``).
"""

from __future__ import annotations

import pwd

from toolrun.permissions.observe import observe


class TildeError(ValueError):
    """A tilde prefix whose expansion cannot be known in advance."""


def tilde_prefix(text: str) -> tuple[str, str] | None:
    """``(prefix, rest)`` for a path starting with ``~`` (``rest`` keeps its ``/``)."""
    if not text.startswith("~"):
        return None
    slash = text.find("/")
    if slash < 0:
        return text[1:], ""
    return text[1:slash], text[slash:]


def user_home(name: str) -> str | None:
    """The home directory of user ``name``, or None when there is no such user."""
    return observe(_user_home, name)


def _user_home(name: str) -> str | None:
    try:
        return pwd.getpwnam(name).pw_dir or None
    except (KeyError, UnicodeEncodeError, ValueError):  # no such user, NUL in the name
        return None


def expand_tilde(
    text: str,
    *,
    home: str,
    cwd: str | None = None,
    oldpwd: str | None = None,
) -> str:
    """``text`` with its tilde prefix expanded as bash would expand it.

    ``cwd`` and ``oldpwd`` are what ``$PWD`` and ``$OLDPWD`` will be when the word is
    expanded; when one of them is needed and not known, or the prefix indexes the
    directory stack, :class:`TildeError` says why (the caller must not guess).
    """
    split = tilde_prefix(text)
    if split is None:
        return text
    prefix, rest = split
    if prefix == "":
        return home.rstrip("/") + rest if rest else home
    if prefix == "+":
        if cwd is None:
            raise TildeError(f"'~+' is the working directory, which is not known here: {text}")
        return cwd.rstrip("/") + rest if rest else cwd
    if prefix == "-":
        if oldpwd is None:
            raise TildeError(f"'~-' is $OLDPWD, which is not known here: {text}")
        return oldpwd.rstrip("/") + rest if rest else oldpwd
    if prefix.lstrip("+-").isdigit():
        raise TildeError(f"'~{prefix}' names an entry of the directory stack: {text}")
    found = user_home(prefix)
    if found is None:
        return text  # bash leaves an unknown ~name alone: a relative path
    return found.rstrip("/") + rest if rest else found
