"""The methods ``@dataclass`` generates, compiled once and kept beside toolrun's bytecode.

Every ``@dataclass`` writes the source of its ``__init__``, ``__repr__``, ``__eq__``, ...
and compiles it with ``exec`` while its module is imported: about 600 small compiles, a
third of the CPU of a one-call ``toolrun exec`` before this cache. :func:`install` gives
the :mod:`dataclasses` module an ``exec`` of its own that compiles each source text once
and keeps the code object, by the whole text, in one file in toolrun's ``__pycache__``;
the next process executes the kept code instead of compiling the text again.

The key is the exact source text, so a kept code object is always the one compiling the
text would give (same filename ``<string>``, no inherited ``__future__`` flags: the text
is compiled as :mod:`dataclasses`' own ``exec`` would compile it); a class whose fields
change simply misses. The file is trusted as the bytecode beside it is, and no more: it
is read only when this user (or root) owns it and nobody else may write it, and only for
this interpreter's magic number. A file that does not read whole is ignored, and written
again (atomically, under a new name then renamed) at exit when the process compiled
anything new, unless the interpreter is told not to write bytecode. Only the CLI
installs it (:mod:`toolrun.__main__`): the library leaves :mod:`dataclasses` alone.
"""

from __future__ import annotations

import builtins
import marshal
import os
import sys
from typing import Any

#: A cache holding more than this many texts is written again with this process's only.
MAX_ENTRIES = 4000
#: The name of the file, in the folder of toolrun's own bytecode.
FILE_NAME = f"dataclass-code.{sys.implementation.cache_tag}.marshal"

_builtin_exec = builtins.exec


class CodeCache:
    """Source text -> code object, read from ``path`` on first use, written by :meth:`save`."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._kept: dict[str, bytes] | None = None  # as read: text -> marshalled code
        self._used: dict[str, bytes] = {}  # the texts this process executed
        self.compiled = 0  # how many texts were not in the file

    def code(self, source: str) -> Any:
        """The code object of ``source`` (compiled as ``exec`` would compile it)."""
        kept = self._kept if self._kept is not None else self._load()
        data = self._used.get(source) or kept.get(source)
        if data is not None:
            try:
                code = marshal.loads(data)
            except (EOFError, ValueError, TypeError):
                code = None
            if type(code) is _CODE:
                self._used[source] = data
                return code
        code = compile(source, "<string>", "exec", dont_inherit=True)
        self._used[source] = marshal.dumps(code)
        self.compiled += 1
        return code

    def _load(self) -> dict[str, bytes]:
        self._kept = {}
        if self.path is None:
            return self._kept
        try:
            with open(self.path, "rb") as f:
                info = os.fstat(f.fileno())
                if info.st_uid not in (os.getuid(), 0) or info.st_mode & 0o022:
                    return self._kept  # not ours alone: never run code others could write
                data = f.read()
            magic = _magic()
            if not data.startswith(magic):
                return self._kept
            table = marshal.loads(data[len(magic) :])
        except (OSError, EOFError, ValueError, TypeError):
            return self._kept
        if isinstance(table, dict):
            self._kept = {k: v for k, v in table.items() if type(k) is str and type(v) is bytes}
        return self._kept

    def save(self) -> None:
        """Write the file again if this process compiled anything new (best effort)."""
        if not self.compiled or self.path is None or sys.dont_write_bytecode:
            return
        kept = self._kept or {}
        table = {**kept, **self._used} if len(kept) + self.compiled <= MAX_ENTRIES else self._used
        temporary = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(temporary, flags, 0o644)
            with os.fdopen(fd, "wb") as f:
                f.write(_magic() + marshal.dumps(table))
            os.replace(temporary, self.path)
        except OSError:  # a read-only install: compile as before, next time too
            try:
                os.unlink(temporary)
            except OSError:
                pass
        self.compiled = 0


def _nothing() -> None:
    """(Its code's type is the code type, without importing :mod:`types`.)"""


_CODE = type(_nothing.__code__)


def _magic() -> bytes:
    from importlib.util import MAGIC_NUMBER

    return MAGIC_NUMBER


def default_path() -> str | None:
    """The cache file beside toolrun's bytecode (``PYTHONPYCACHEPREFIX`` respected)."""
    from importlib.util import cache_from_source

    try:
        return os.path.join(os.path.dirname(cache_from_source(__file__)), FILE_NAME)
    except (NotImplementedError, ValueError):  # no bytecode cache on this interpreter
        return None


def caching_exec(cache: CodeCache) -> Any:
    """An ``exec`` that takes a source text's code from ``cache``; anything else as is."""

    def exec_(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> None:
        if type(source) is not str or kwargs:
            _builtin_exec(source, globals, locals, **kwargs)
            return
        if globals is None:  # exec's own default: the caller's namespace
            caller = sys._getframe(1)
            globals = caller.f_globals
            locals = caller.f_locals if locals is None else locals
        _builtin_exec(cache.code(source), globals, locals)

    return exec_


_installed: CodeCache | None = None


def install(path: str | None = None) -> CodeCache:
    """Have :mod:`dataclasses` compile through a :class:`CodeCache` at ``path`` (by default
    :func:`default_path`), saved at exit. Once per process: later calls return the first."""
    global _installed
    if _installed is None:
        import atexit
        import dataclasses

        cache = CodeCache(path if path is not None else default_path())
        dataclasses.exec = caching_exec(cache)  # type: ignore[attr-defined]
        atexit.register(cache.save)
        _installed = cache
    return _installed


def exec_generated(source: str, globals: dict[str, Any], locals: dict[str, Any]) -> None:
    """``exec`` of other generated code (a tool input's validator): its code from the
    installed cache, compiled once and kept as a dataclass's methods are, or compiled now
    when none is installed (the library)."""
    if _installed is None:
        _builtin_exec(source, globals, locals)
    else:
        _builtin_exec(_installed.code(source), globals, locals)
