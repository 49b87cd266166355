"""Words that name a stream rather than a file: where a command can feed a program text.

``perl /dev/stdin <<< CODE``, ``make -f - <<< RULES``, ``node <(echo CODE)``,
``awk -f /dev/fd/3 3<<< CODE``: the "file" holds what the command itself wrote, so a
program read from it is code toolrun cannot see. A helper for the program modules
(it names no programs of its own).
"""

from __future__ import annotations

import posixpath

from toolrun.permissions.words import Word

#: Where a stream lives once the path is normalised: ``/dev/stdin``, ``/dev/fd/N``,
#: ``/dev/tty``, ``/proc/self/fd/N``, ``/proc/PID/fd/N``.
_STREAM_ROOTS = ("dev/", "proc/")


def is_stream(word: Word) -> bool:
    """Whether ``word`` may name the command's own input (``-``, ``/dev/stdin``, a
    process substitution, a word only known at run time) rather than a file on disk."""
    value = word.value
    if value is None or word.glob:
        return True  # `<(echo CODE)`, `$F`, `/dev/std*`: could be any of them
    if value == "-":
        return True
    if word.tilde and value.startswith("~"):
        # `~/../../dev/stdin`: from $HOME, `..` can climb to `/`
        value = "/" + value.partition("/")[2]
    if value.startswith("/"):
        return posixpath.normpath(value).lstrip("/").startswith(_STREAM_ROOTS)
    normal = posixpath.normpath(value)
    if not normal.startswith("../"):
        return False  # (`dev/run.py` is a file of the working directory)
    while normal.startswith("../"):
        normal = normal[3:]  # enough `..` reach `/`
    return normal.startswith(_STREAM_ROOTS)


def any_stream(words: tuple[Word, ...]) -> Word | None:
    """The first word that may name a stream."""
    for word in words:
        if is_stream(word):
            return word
    return None
