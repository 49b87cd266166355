"""Delivery of results: in plan order, each as soon as every earlier call of its plan has
its result, shown once per scheduling tick.

Owns :class:`_Ordered` (a plan's results released in index order), :class:`_Verifying`
(writes that keep their place in that order while their autoVerify runs on),
:class:`_Slices` (the share of the event loop a concurrent run's workers keep, so that the
tick and Ctrl-C get their turn) and the executor's lowest layer, :class:`_Delivery`: the
tick that writes the journal's records in one write, then gives each result to
``on_result`` and calls ``on_flush`` once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel

from toolrun.execution.results import Result

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from toolrun.execution.journal import Journal

ResultSink = Callable[[Result], None]
# called after each tick's results went to the ResultSink (e.g. to flush stdout once)
FlushSink = Callable[[], None]


class _Ordered:
    """Releases results in index order as soon as every earlier one is in."""

    def __init__(self, sink: ResultSink, start: int = 0) -> None:
        self._sink = sink
        self._next = start
        self._pending: dict[int, Result] = {}

    def put(self, result: Result) -> None:
        self._pending[result.index] = result
        while self._next in self._pending:
            self._sink(self._pending.pop(self._next))
            self._next += 1


class _Verifying:
    """The writes of one turn whose verifiers still run. Each keeps its file's lock (and
    its place in the ordered output) until its verifiers end, so later reads and writes
    of other files go on meanwhile; a call that may touch any file waits for all."""

    def __init__(self, tg: TaskGroup) -> None:
        self._tg = tg
        self._pending = 0
        self._idle = anyio.Event()
        self._idle.set()

    async def start(self, execute: Callable[..., Awaitable[Result]], out: _Ordered) -> None:
        """Run the write (``execute(written=event)``) in the background; return once it is
        written (or never will be)."""
        written = anyio.Event()
        self._pending += 1
        if self._idle.is_set():
            self._idle = anyio.Event()

        async def write_then_verify() -> None:
            try:
                out.put(await execute(written=written))
            finally:
                written.set()
                self._pending -= 1
                if not self._pending:
                    self._idle.set()

        self._tg.start_soon(write_then_verify)
        await written.wait()

    async def idle(self) -> None:
        await self._idle.wait()


class _Flag:
    """Set by an event-loop callback: the loop has had control since it was made."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = False

    def set(self) -> None:
        self.value = True


class _Slices:
    """The time the workers of a concurrent run keep the event loop, shared by them all.

    Calls that never wait (small reads, free slots) would otherwise keep the loop from
    everything else, Ctrl-C handling and the tick that shows results included. Past
    ``YIELD_EVERY_S`` without the loop having had control, each worker hands it over
    before its next call, and none goes on until the loop has run what was waiting
    (not one slice per worker in turn); calls that waited (a command) have let it run
    already, and then nobody needs to.
    """

    __slots__ = ("_loop", "_ran", "_start")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._arm()

    def _arm(self) -> None:
        self._start = time.monotonic()
        self._ran = _Flag()  # set once the event loop has had control since it was armed
        self._loop.call_soon(self._ran.set)

    def over(self) -> bool:
        return time.monotonic() - self._start > YIELD_EVERY_S

    async def hand_over(self) -> None:
        """Once the slice is :meth:`over`: wait until the event loop has had control."""
        ran = self._ran
        while not ran.value:  # (its callback runs before a checkpoint comes back)
            await anyio.lowlevel.checkpoint()
        if self._ran is ran:  # the first worker back starts the next slice
            self._arm()

YIELD_EVERY_S = 0.005


class _Delivery:
    """The executor's results on their way out: the layer the other parts build on."""

    journal: Journal | None
    on_result: ResultSink | None
    on_flush: FlushSink | None
    _unshown: list[Result]  # delivered, for on_result at the next tick
    _tick_due: bool
    _sink_error: BaseException | None

    def _deliver(self, result: Result, acc: list[Result] | None) -> None:
        if acc is not None:
            acc.append(result)
        if self.journal is not None:
            self.journal.add(result.journal_line())
        self._unshown.append(result)
        self._tick_soon()

    def _tick_soon(self) -> None:
        """A tick when the event loop next gets control (at once when not under one)."""
        if self._tick_due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not under asyncio: no tick to wait for
            self._tick()
            return
        self._tick_due = True
        loop.call_soon(self._tick)

    def _tick(self) -> None:
        """Once per scheduling tick (when the event loop next gets control), and at the
        end: the journal's records in one write, then the results to ``on_result``."""
        self._tick_due = False
        if self.journal is not None:
            self.journal.flush()
        shown, self._unshown = self._unshown, []
        if not shown or self.on_result is None:
            return
        try:
            for result in shown:
                self.on_result(result)
            if self.on_flush is not None:
                self.on_flush()
        except BaseException as exc:  # noqa: BLE001 - raised at the end of the run
            # (outside any task, from the event loop's own callback, it would be lost)
            if self._sink_error is None:
                self._sink_error = exc

    def _raise_sink_error(self) -> None:
        error, self._sink_error = self._sink_error, None
        if error is not None:
            raise error
