"""Remember a pure function of an immutable object by the object's identity.

Parsed commands are cached (``bash.analyse``), so the same :class:`SimpleCommand` and
argv tuples come back call after call; what is derived from them alone (file arguments,
option files) is worked out once. The object is kept with its value, so an id is never
reused while its entry lives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")

MAX_ENTRIES = 16_384


def by_identity(fn: Callable[[K], V]) -> Callable[[K], V]:
    cache: dict[int, tuple[K, V]] = {}
    get = cache.get

    def wrapper(obj: K) -> V:
        key = id(obj)
        hit = get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = fn(obj)
        if len(cache) >= MAX_ENTRIES:
            cache.clear()
        cache[key] = (obj, value)
        return value

    wrapper.__doc__ = fn.__doc__
    wrapper.__name__ = getattr(fn, "__name__", "wrapper")
    return wrapper
