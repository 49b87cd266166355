"""The read-only tools' worker threads (``_blocking.run_blocking``): a cancel abandons the
thread at once, and an abandoned thread never holds up the exit (anyio's worker threads
are joined at exit: toolrun printed its results and then never ended, #27 items 6, 7)."""

from __future__ import annotations

import contextvars
import subprocess
import sys
import textwrap
import threading
import time

import anyio
import pytest

from tests.faults.b_support import BOUND_S
from toolrun.tools.builtins._blocking import run_blocking

pytestmark = pytest.mark.anyio

name: contextvars.ContextVar[str] = contextvars.ContextVar("name", default="unset")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_cancel_returns_at_once_and_the_thread_is_left() -> None:
    release = threading.Event()
    with anyio.move_on_after(0.2) as scope:
        await run_blocking(release.wait)  # blocks until released: the cancel must not wait
    assert scope.cancelled_caught
    release.set()


async def test_results_errors_and_context_come_back() -> None:
    name.set("caller")
    assert await run_blocking(name.get) == "caller"
    with pytest.raises(ZeroDivisionError):
        await run_blocking(lambda: 1 / 0)
    # many at once: each gets its own answer
    results: list[int] = []

    async def one(n: int) -> None:
        results.append(await run_blocking(lambda: n * n))

    async with anyio.create_task_group() as tg:
        for n in range(20):
            tg.start_soon(one, n)
    assert sorted(results) == sorted(n * n for n in range(20))


@pytest.mark.parametrize("blocked", ["time.sleep(300)", "threading.Event().wait()",
                                     "os.read(os.pipe()[0], 1)", "socket.socketpair()[0].recv(1)"])
def test_an_abandoned_thread_does_not_hold_up_the_exit(blocked: str) -> None:
    script = textwrap.dedent(f"""
        import os, socket, threading, time
        import anyio
        from toolrun.tools.builtins._blocking import run_blocking

        async def main():
            with anyio.move_on_after(0.2):
                await run_blocking(lambda: {blocked})
            print("cancelled", flush=True)

        anyio.run(main)
    """)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "cancelled\n"
    assert time.monotonic() - started < BOUND_S
