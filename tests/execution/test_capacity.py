"""A slot taken at once (a read that needs no await) follows the limits and the queue
exactly as an awaited slot does."""

from __future__ import annotations

import anyio
import anyio.abc
import anyio.lowlevel
import pytest

from toolrun.execution.capacity import Capacity

pytestmark = pytest.mark.anyio


async def hold(
    tg: anyio.abc.TaskGroup,
    capacity: Capacity,
    kind: str,
    plan: anyio.CapacityLimiter | None = None,
) -> anyio.Event:
    """A task holding a slot of ``kind`` until the returned event is set."""
    release = anyio.Event()
    held = anyio.Event()

    async def holder() -> None:
        async with capacity.slot(kind, plan):
            held.set()
            await release.wait()

    tg.start_soon(holder)
    await held.wait()
    return release



async def test_a_slot_is_taken_at_once_only_while_one_is_free() -> None:
    capacity = Capacity(2, {"read": 1})
    async with anyio.create_task_group() as tg:
        assert capacity.take_now("read")
        capacity.give_back("read")
        reading = await hold(tg, capacity, "read")
        assert not capacity.take_now("read")  # the kind's one slot is taken
        assert capacity.take_now("write")  # the second global slot
        capacity.give_back("write")
        writing = await hold(tg, capacity, "write")
        assert not capacity.take_now("write")  # none left
        assert capacity.in_flight == 2  # (a refused take gives back what it took)
        reading.set()
        writing.set()
    assert capacity.in_flight == 0
    assert capacity.take_now("read")  # back as it was
    capacity.give_back("read")
    assert capacity.in_flight == 0


async def test_a_slot_taken_at_once_never_jumps_the_queue() -> None:
    capacity = Capacity(1)
    order: list[str] = []
    held = anyio.Event()
    release = anyio.Event()

    async def holder() -> None:
        async with capacity.slot("execute"):
            held.set()
            await release.wait()

    async def waiter() -> None:
        async with capacity.slot("execute"):
            order.append("waiter")

    async with anyio.create_task_group() as tg:
        tg.start_soon(holder)
        await held.wait()
        assert not capacity.take_now("read")  # the one slot is held
        tg.start_soon(waiter)
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        release.set()
        # the slot goes to the task that queued for it, not to a call taken at once
        assert not capacity.take_now("read")
    assert order == ["waiter"]
    assert capacity.take_now("read")
    capacity.give_back("read")


async def test_slots_taken_at_once_by_several_plans_count_against_each() -> None:
    capacity = Capacity(4)
    plan = capacity.plan_limiter(2)
    assert plan is not None and plan.total_tokens == 2
    async with anyio.create_task_group() as tg:
        first = await hold(tg, capacity, "read", plan)
        assert capacity.take_now("read", plan)
        capacity.give_back("read", plan)
        second = await hold(tg, capacity, "read", plan)
        assert not capacity.take_now("read", plan)  # the plan's share is taken
        assert capacity.in_flight == 2 and capacity.take_now("read")  # others' is not
        capacity.give_back("read")
        first.set()
        second.set()
    assert capacity.in_flight == 0 and plan.borrowed_tokens == 0
