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
