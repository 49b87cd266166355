"""Blocking work of the read-only tools, off the event loop, in threads a cancel abandons.

A read of a slow file system, a walk of a huge tree or a socket that trickles must not
hold up the event loop (the other calls, the timeouts, Ctrl-C) nor the exit. anyio's
worker threads do the first, but a thread it abandoned on cancel is one the interpreter
joins at exit: toolrun printed its results and then never ended. These are daemon
threads: a cancelled call's thread is left to finish (or block) on its own, and exit
does not wait for it. Only for work that changes nothing: a write must be waited for,
so that its result says whether it happened.

Threads are kept a while and reused (a new thread per call costs more than a small read).
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: How long an idle thread waits for more work before it ends.
IDLE_S = 10.0

_Job = tuple[contextvars.Context, Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]

_lock = threading.Lock()
_idle: list[_Worker] = []


class _Worker(threading.Thread):
    def __init__(self) -> None:
        super().__init__(name="toolrun blocking worker", daemon=True)
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=IDLE_S)
            except queue.Empty:
                with _lock:
                    if self in _idle:  # not taken meanwhile: end
                        _idle.remove(self)
                        return
                continue  # taken just now: its job is on its way
            context, work, loop, future = job
            try:
                result, error = context.run(work), None
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:  # its loop has closed: nobody waits any more
                pass
            del job, context, work, loop, future, result, error
            with _lock:
                _idle.append(self)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # cancelled: abandoned
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


async def run_blocking(work: Callable[[], T]) -> T:
    """``work()`` in a worker thread; a cancel (timeout, Ctrl-C) returns at once and
    leaves the thread behind, which never holds up the exit. Context variables are
    those of the caller."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    with _lock:
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _Worker()
        worker.jobs.put((contextvars.copy_context(), work, loop, future))
        worker.start()
    else:
        worker.jobs.put((contextvars.copy_context(), work, loop, future))
    return await future
