"""Partitioning a turn into runs (pure)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Run(Generic[T]):
    """Calls that start together: all concurrency-safe, or one exclusive call."""

    kind: Literal["concurrent", "exclusive"]
    calls: tuple[T, ...]


def partition(
    calls: Sequence[T],
    is_safe: Callable[[T], bool],
    ends_run: Callable[[T], bool] | None = None,
) -> list[Run[T]]:
    """Consecutive concurrency-safe calls form one concurrent run; every other call runs alone.

    A safe call for which ``ends_run`` holds (a ``cd``: it moves the working directory
    the next calls start in) is the last of its concurrent run, so the calls after it
    start once its effect is known. Order is preserved. ``is_safe`` raising counts as
    not safe, ``ends_run`` raising as ending the run (fail closed).
    """
    runs: list[Run[T]] = []
    pending: list[T] = []
    for call in calls:
        try:
            safe = is_safe(call)
        except Exception:  # noqa: BLE001 - a tool that cannot tell is not safe
            safe = False
        if safe:
            pending.append(call)
            if ends_run is not None and _holds(ends_run, call):
                runs.append(Run("concurrent", tuple(pending)))
                pending = []
            continue
        if pending:
            runs.append(Run("concurrent", tuple(pending)))
            pending = []
        runs.append(Run("exclusive", (call,)))
    if pending:
        runs.append(Run("concurrent", tuple(pending)))
    return runs


def _holds(predicate: Callable[[T], bool], call: T) -> bool:
    try:
        return bool(predicate(call))
    except Exception:  # noqa: BLE001 - cannot tell: assume it does
        return True


class Grouping(Generic[T]):
    """:func:`partition`'s runs, made as their calls are taken: a concurrent run's next
    call is looked at only when it is asked for (``exec`` starts a run's first calls while
    the rest are still being grouped and decided). ``is_safe`` and ``ends_run`` are asked
    of each call at most once, in order, and fail closed as in :func:`partition`."""

    __slots__ = ("_at", "_calls", "_ends_run", "_is_safe", "_open", "_unsafe_next")

    def __init__(
        self,
        calls: Sequence[T],
        is_safe: Callable[[T], bool],
        ends_run: Callable[[T], bool] | None = None,
    ) -> None:
        self._calls = calls
        self._is_safe = is_safe
        self._ends_run = ends_run
        self._at = 0  # the next call not taken
        self._open = False  # a concurrent run is being taken
        self._unsafe_next = False  # the call at _at was found not safe (asked once)

    def start(self) -> tuple[Literal["concurrent", "exclusive"], T] | None:
        """The next run's kind and first call (the rest of an open run is left: it
        ended), or None when every call is taken."""
        self._open = False
        if self._at >= len(self._calls):
            return None
        call = self._calls[self._at]
        self._at += 1
        unsafe, self._unsafe_next = self._unsafe_next, False
        if unsafe or not self._safe(call):
            return "exclusive", call
        self._open = not self._ends(call)
        return "concurrent", call

    def more(self) -> T | None:
        """The next call of the concurrent run being taken, or None: it ended (the next
        call is not safe, a call before ended the run, or no call is left)."""
        if not self._open or self._at >= len(self._calls):
            self._open = False
            return None
        call = self._calls[self._at]
        if not self._safe(call):
            self._open = False
            self._unsafe_next = True  # the first of an exclusive run
            return None
        self._at += 1
        if self._ends(call):
            self._open = False
        return call

    def rest(self) -> Sequence[T]:
        """The calls not taken yet (all of them taken from here on)."""
        left = self._calls[self._at :]
        self._at = len(self._calls)
        self._open = False
        return left

    def _safe(self, call: T) -> bool:
        try:
            return bool(self._is_safe(call))
        except Exception:  # noqa: BLE001 - a tool that cannot tell is not safe
            return False

    def _ends(self, call: T) -> bool:
        return self._ends_run is not None and _holds(self._ends_run, call)
