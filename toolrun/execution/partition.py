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


def partition(calls: Sequence[T], is_safe: Callable[[T], bool]) -> list[Run[T]]:
    """Consecutive concurrency-safe calls form one concurrent run; every other call runs alone.

    Order is preserved. ``is_safe`` raising counts as not safe (fail closed).
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
            continue
        if pending:
            runs.append(Run("concurrent", tuple(pending)))
            pending = []
        runs.append(Run("exclusive", (call,)))
    if pending:
        runs.append(Run("concurrent", tuple(pending)))
    return runs
