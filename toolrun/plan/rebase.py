"""A recorded session's working directory mapped onto the workspace (design §2, issue 18).

An agent session records absolute paths under its own ``cwd`` (``/home/dev/proj/src/a.py``
with ``"cwd": "/home/dev/proj"``). To decide its calls as if that ``cwd`` were the workspace,
such paths are rebased: the part below the recorded directory is kept and put below the
workspace. Everything else stays as written, so a path outside stays outside.

Rebasing must never move a path across the boundary, so it is refused (the path is kept,
and is then decided as outside: fail closed) whenever the part below the recorded directory
is not plain literal text without ``..``: a ``..`` below a rebased root would climb from the
workspace into whatever lies beside it (an additional directory, say), not beside the
recorded one. In a Bash command only whole literal words are rebased: the recorded
directory must start a word (or follow ``=``, ``:`` or a redirection) and the word must end
in plain characters, so that quoting, expansions and globs cannot smuggle a ``..`` in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

# Characters that mean the same unquoted, in single and in double quotes.
_PLAIN: Final = re.compile(r"[A-Za-z0-9_./+,@%-]*")
# What ends a shell word outside quotes (metacharacters and blanks).
_WORD_END: Final = frozenset(" \t\n;|&()<>")
# What may come right before a rebased path in a command: the start of a word, the value of
# an assignment or option (``--out=``, ``PATH=a:``), a redirection (``>``, ``2>``).
_WORD_START: Final = _WORD_END | frozenset("=:")
_QUOTES: Final = frozenset("'\"")
#: Input fields of Claude Code's file tools that hold a path (Glob's pattern may be one).
PATH_KEYS: Final = ("file_path", "notebook_path", "path", "pattern")
_PATH_TOOLS: Final = frozenset(
    {"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "NotebookRead", "Glob", "Grep", "LS"}
)


@dataclass(frozen=True, slots=True)
class Rebased:
    """One rebased value: which input field, as recorded, as decided."""

    field: str
    recorded: str
    rebased: str


_WINDOWS: Final = re.compile(r"[A-Za-z]:[\\/]|[\\/]{2}[^\\/]")


def windows_absolute(path: str) -> bool:
    """Whether ``path`` is an absolute Windows path (``e:\\x``, ``C:/Users``, ``\\\\host``)."""
    return _WINDOWS.match(path) is not None and not path.startswith("/")


def windows_form(path: str) -> str:
    """A Windows path with ``/`` between its parts, its drive letter in lower case and no
    trailing separator: how two spellings of one Windows path compare."""
    text = path.replace("\\", "/")
    if len(text) >= 2 and text[1] == ":":
        text = text[0].lower() + text[1:]
    return text.rstrip("/") or text


def usable_root(recorded: str) -> str | None:
    """``recorded`` without trailing slashes, or None when it cannot be a root.

    It must be absolute and plain (no ``.``/``..`` segments); ``/`` is refused, since
    mapping it would move every absolute path into the workspace. A Windows root (a
    session recorded on Windows) is kept in :func:`windows_form`.
    """
    if windows_absolute(recorded):
        root = windows_form(recorded)
        parts = root.split("/")
        if len(parts) < 2 or not parts[1] or any(p in (".", "..") for p in parts):
            return None  # a bare drive (``C:\\``) would move every path on it
        return root
    if not recorded.startswith("/"):
        return None
    root = recorded.rstrip("/")
    if not root or any(part in (".", "..") for part in root.split("/")):
        return None
    return root


@dataclass(frozen=True, slots=True)
class Rebase:
    """Maps ``root`` (a recorded cwd, see :func:`usable_root`) onto ``workspace``."""

    root: str
    workspace: str

    def path(self, value: str) -> str | None:
        """``value`` below the workspace, or None when it is not plainly below ``root``."""
        if windows_absolute(self.root):
            if not windows_absolute(value):
                return None
            value = windows_form(value)
            if value.lower() == self.root.lower():  # (Windows paths ignore case)
                return self.workspace
            if not value.lower().startswith(self.root.lower() + "/"):
                return None
            rest = value[len(self.root):]
            if ".." in rest.split("/"):
                return None
            return self.workspace.rstrip("/") + rest
        if value == self.root:
            return self.workspace
        if not value.startswith(self.root + "/"):
            return None
        rest = value[len(self.root):]
        if ".." in rest.split("/"):
            return None
        return self.workspace.rstrip("/") + rest

    def command(self, text: str) -> str:
        """``text`` with each whole literal word under ``root`` rebased."""
        root, ws = self.root, self.workspace
        if not _PLAIN.fullmatch(root) or not _PLAIN.fullmatch(ws):
            return text  # cannot be spliced into a command without re-quoting: left as is
        out: list[str] = []
        start = 0
        found = text.find(root)
        while found >= 0:
            end = found + len(root)
            tail = _PLAIN.match(text, end)
            assert tail is not None
            stop = tail.end()
            if (
                (stop == end or text[end] == "/")
                and ".." not in text[end:stop].split("/")
                and self._word(text, found, stop)
            ):
                out.append(text[start:found])
                out.append(ws.rstrip("/") + text[end:stop] if stop > end else ws)
                start = stop
            found = text.find(root, max(stop, found + 1))
        out.append(text[start:])
        return "".join(out)

    @staticmethod
    def _word(text: str, begin: int, stop: int) -> bool:
        """Whether ``text[begin:stop]`` is a whole word (or a whole quoted word)."""
        before = text[begin - 1] if begin else ""
        if before in _QUOTES:
            # an opening quote: it must start the word and close right after the path
            opener = text[begin - 2] if begin >= 2 else ""
            return (
                (opener == "" or opener in _WORD_START)
                and text[stop:stop + 1] == before
                and (stop + 1 == len(text) or text[stop + 1] in _WORD_END)
            )
        if before and before not in _WORD_START:
            return False
        return stop == len(text) or text[stop] in _WORD_END

    def call_input(self, tool: str, data: Mapping[str, Any]) -> tuple[dict[str, Any], list[Rebased]]:
        """A call's input with its paths rebased, and what changed."""
        out = dict(data)
        changes: list[Rebased] = []
        keys: tuple[str, ...] = ()
        if tool == "Bash":
            keys = ("command",)
        elif tool in _PATH_TOOLS:
            keys = PATH_KEYS
        for key in keys:
            value = out.get(key)
            if not isinstance(value, str):
                continue
            new = self.command(value) if tool == "Bash" else self.path(value)
            if new is not None and new != value:
                out[key] = new
                changes.append(Rebased(key, value, new))
        return out, changes

