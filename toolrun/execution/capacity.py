"""Capacity: a global limit, per-kind limits and a per-plan limit, all anyio CapacityLimiters.

A call holds its plan's limiter, then its kind's, then the global one. With
several plans each plan's limiter caps its share, and the limiters' FIFO wake-up
order then lets plans take turns (round-robin) at the global limit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager

import anyio


class Capacity:
    def __init__(self, global_limit: int, kind_limits: Mapping[str, int] | None = None) -> None:
        if global_limit < 1:
            raise ValueError("the global limit must be at least 1")
        self.global_limit = global_limit
        self._global = anyio.CapacityLimiter(global_limit)
        self._kinds = {
            kind: anyio.CapacityLimiter(limit) for kind, limit in (kind_limits or {}).items()
        }
        self._global_slot = _GlobalSlot(self._global)
        # Who holds what take_now took: the slot goes back before anything else runs (no
        # await in between), so one borrower serves every such call, and looking up the
        # current task twice per limiter per call (a third of take_now) is spared.
        self._at_once = _AtOnce()

    def plan_limiter(self, jobs: int) -> anyio.CapacityLimiter | None:
        """A limiter for one of ``jobs`` plans running side by side (None for a single plan)."""
        if jobs <= 1:
            return None
        return anyio.CapacityLimiter(max(1, self.global_limit // jobs))

    @property
    def in_flight(self) -> int:
        return int(self._global.borrowed_tokens)

    def slot(
        self, kind: str, plan: anyio.CapacityLimiter | None = None
    ) -> AbstractAsyncContextManager[None]:
        if plan is None and kind not in self._kinds:  # the common case, kept cheap
            return self._global_slot
        return self._slots(kind, plan)

    def take_now(self, kind: str, plan: anyio.CapacityLimiter | None = None) -> bool:
        """Take a slot as :meth:`slot` would, if that needs no wait (nobody queues
        for it); :meth:`give_back` returns it. For a call that runs without awaiting."""
        borrower = self._at_once
        held: list[anyio.CapacityLimiter] = []
        for limiter in (plan, self._kinds.get(kind), self._global):
            if limiter is None:
                continue
            try:
                limiter.acquire_on_behalf_of_nowait(borrower)
            except anyio.WouldBlock:
                for taken in reversed(held):
                    taken.release_on_behalf_of(borrower)
                return False
            held.append(limiter)
        return True

    def give_back(self, kind: str, plan: anyio.CapacityLimiter | None = None) -> None:
        """Return a slot :meth:`take_now` took (before anything else ran)."""
        borrower = self._at_once
        self._global.release_on_behalf_of(borrower)
        kind_limiter = self._kinds.get(kind)
        if kind_limiter is not None:
            kind_limiter.release_on_behalf_of(borrower)
        if plan is not None:
            plan.release_on_behalf_of(borrower)

    @asynccontextmanager
    async def _slots(
        self, kind: str, plan: anyio.CapacityLimiter | None
    ) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if plan is not None:
                await stack.enter_async_context(plan)
            kind_limiter = self._kinds.get(kind)
            if kind_limiter is not None:
                await stack.enter_async_context(kind_limiter)
            await stack.enter_async_context(self._global)
            yield


class _GlobalSlot(AbstractAsyncContextManager[None]):
    """The global limiter alone, with no generator per use (the common case)."""

    __slots__ = ("_limiter",)

    def __init__(self, limiter: anyio.CapacityLimiter) -> None:
        self._limiter = limiter

    async def __aenter__(self) -> None:
        try:
            self._limiter.acquire_nowait()  # no event-loop round trip when a slot is free
        except anyio.WouldBlock:
            await self._limiter.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self._limiter.release()


class _AtOnce:
    """The borrower of the slots :meth:`Capacity.take_now` takes."""

    __slots__ = ()
