"""What a decision read from the system, so that a remembered decision can be re-checked.

A permission decision is a pure function of the engine (rules, workspace, home), the
call (tool, input, cwd, mode) and what it reads from the system while it decides: where
symlinks lead, which files a glob matches, which directories exist, where a git
repository starts, the user database, the tool registry. Every such read goes through
:func:`observe`, which, while a decision is being recorded, notes the function, its
arguments and its result.

Calling the same functions with the same arguments again and getting equal results
proves that deciding afresh would take the same path and come out the same (everything
else it computes from is unchanged); :func:`unchanged` does that. It is much cheaper than
deciding: a few ``readlink`` calls instead of parsing, matching and building the trace.

A read whose result cannot be compared (a registered tool's own ``affected_paths``, the
sandbox probe) makes the recording :attr:`Recording.opaque`: such a decision is never
remembered.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: (function, arguments, result) of one read, in the order the decision made them.
Observation = tuple[Callable[..., Any], tuple[Any, ...], Any]


class Recording:
    """The reads of one decision (one thread records at a time into its own)."""

    __slots__ = ("log", "opaque")

    def __init__(self) -> None:
        self.log: list[Observation] = []
        self.opaque = False


class _Local(threading.local):
    recording: Recording | None = None  # (a class default: a missing attribute is slow)


_local = _Local()


def _current() -> Recording | None:
    return _local.recording


def current() -> Recording | None:
    """The recording of this thread's decision, if one is being recorded (for a memo
    within one decision that notes again what it read)."""
    return _local.recording


def observe(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``, noted in the decision being recorded on this thread (if any).

    What ``fn`` reads itself is not noted: its result stands for it.
    """
    recording = _current()
    if recording is None:
        return fn(*args)
    _local.recording = None
    try:
        result = fn(*args)
    finally:
        _local.recording = recording
    recording.log.append((fn, args, result))
    return result


def opaque() -> None:
    """The decision being recorded read something that cannot be re-checked."""
    recording = _current()
    if recording is not None:
        recording.opaque = True


def start() -> tuple[Recording, Recording | None]:
    """Record the reads of this thread's next decision (returns it and the one it hides)."""
    outer = _current()
    recording = Recording()
    _local.recording = recording
    return recording, outer


def stop(outer: Recording | None) -> None:
    _local.recording = outer


def note(log: tuple[Observation, ...], *, opaque: bool = False) -> None:
    """Reads made (or re-checked) for this thread's decision by someone else: noted in it."""
    recording = _current()
    if recording is not None:
        recording.log.extend(log)
        recording.opaque = recording.opaque or opaque


def unchanged(log: tuple[Observation, ...]) -> bool:
    """Whether every read gives the result it gave when the decision was made."""
    outer = _current()
    _local.recording = None
    try:
        for fn, args, result in log:
            if fn(*args) != result:
                return False
        return True
    except Exception:  # noqa: BLE001 (a read that now fails: decide afresh, which says why)
        return False
    finally:
        _local.recording = outer
