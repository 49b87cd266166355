"""``exec -``: calls read from stdin as JSON lines, turned into turns as they arrive.

A reader thread feeds a bounded queue (:data:`QUEUE_LINES`): while it is full the
thread blocks, so toolrun stops reading stdin and the writer feels backpressure.
Each turn is whatever lines are waiting, up to the per-turn limit.

Reading stops for good at the end of stdin, when the run is interrupted (Ctrl-C, a
closed stdout) or at the first line that is not a valid call: that line gets its
``error`` result (exit 3) and the calls before it have run; lines after it are never
made into calls. A line longer than :data:`MAX_LINE_BYTES` is such a bad line, so
memory stays bounded in bytes as well as lines. Lines read but never run are
counted in :attr:`StdinCalls.unread`.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, BinaryIO

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.lowlevel import EventLoopToken
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from toolrun.errors import Location, PlanError, Problem
from toolrun.plan.models import Call, Turn

if TYPE_CHECKING:
    from toolrun.execution.executor import Executor
    from toolrun.execution.results import Result
    from toolrun.tools.registry import ToolRegistry

# Lines waiting to become calls; past this, toolrun stops reading stdin.
QUEUE_LINES = 1024
# No call is this long: a longer line is an error (and stops reading), not a memory sink.
MAX_LINE_BYTES = 16 * 1024 * 1024
TOO_LONG_MESSAGE = f"a line longer than {MAX_LINE_BYTES} bytes is not a call"


class StdinCalls:
    def __init__(self, executor: Executor, registry: ToolRegistry, stdin: BinaryIO) -> None:
        self._executor = executor
        self._registry = registry
        self._given = stdin
        self._stdin = _own_reader(stdin)
        self._stopped = threading.Event()
        self._waiting: anyio.CancelScope | None = None
        self._receive: MemoryObjectReceiveStream[tuple[int, bytes | None]] | None = None
        self.read = 0  # lines taken off stdin
        self.used = 0  # lines that became a call, an error result, or were blank

    @property
    def unread(self) -> int:
        """Lines toolrun read from stdin that never became a call or a result."""
        return max(0, self.read - self.used)

    def stop(self) -> None:
        """Read no more (the run is interrupted): called from the event loop."""
        self._stopped.set()
        if self._waiting is not None:
            self._waiting.cancel()
        if self._receive is not None:
            self._receive.close()  # a reader blocked on the full queue gives up

    def _reader(
        self, send: MemoryObjectSendStream[tuple[int, bytes | None]], token: EventLoopToken
    ) -> None:
        # A plain daemon thread: a read blocked on a silent pipe must not keep toolrun alive.
        with contextlib.suppress(Exception):
            number = 0
            while raw := self._stdin.readline(MAX_LINE_BYTES + 1):
                number += 1
                self.read = number
                if self._stopped.is_set():
                    break
                too_long = len(raw) > MAX_LINE_BYTES
                # blocks while the queue is full: backpressure on whoever writes stdin
                anyio.from_thread.run(send.send, (number, None if too_long else raw), token=token)
                if too_long:
                    break  # the consumer stops at it: nothing after it is read
        with contextlib.suppress(Exception):
            anyio.from_thread.run_sync(send.close, token=token)
        if self._stdin is not self._given:
            self._stdin.close()

    async def turns(self) -> AsyncGenerator[tuple[Turn, list[Result]], None]:
        send, receive = anyio.create_memory_object_stream[tuple[int, bytes | None]](QUEUE_LINES)
        self._receive = receive
        token = anyio.lowlevel.current_token()
        threading.Thread(
            target=self._reader, args=(send, token), name="stdin-calls", daemon=True
        ).start()
        limit = self._executor.settings.max_calls_per_turn
        seen_ids: dict[str, Location] = {}
        index = 0
        turn = 0
        with receive:
            while not self._stopped.is_set():
                with anyio.CancelScope() as self._waiting:
                    try:
                        batch = [await receive.receive()]
                    except (anyio.EndOfStream, anyio.ClosedResourceError):
                        return
                self._waiting = None
                if self._stopped.is_set():
                    return
                while len(batch) < limit:
                    try:
                        batch.append(receive.receive_nowait())
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                calls: list[Call] = []
                invalid: list[Result] = []
                for number, raw in batch:
                    self.used += 1
                    text = raw.decode("utf-8", "replace").strip() if raw is not None else None
                    if text == "":
                        continue
                    try:
                        if text is None:
                            raise PlanError(
                                [Problem(Location("-", number, 1), "", TOO_LONG_MESSAGE)]
                            )
                        calls.append(self._call(text, number, index, turn, seen_ids))
                    except PlanError as exc:
                        error = "; ".join(str(p) for p in exc.problems)
                        invalid.append(
                            self._executor.invalid_result("-", index, f"line-{number}", error)
                        )
                        self.stop()  # a bad line stops reading: nothing after it runs
                        break
                    index += 1
                yield Turn(turn, tuple(calls), Location("-", batch[0][0], 1)), invalid
                turn += 1

    def _call(
        self, text: str, number: int, index: int, turn: int, seen_ids: dict[str, Location]
    ) -> Call:
        from toolrun.plan.loader import call_from_json_line

        return call_from_json_line(
            text,
            file="-",
            line=number,
            index=index,
            turn=turn,
            registry=self._registry,
            seen_ids=seen_ids,
        )


def _own_reader(stdin: BinaryIO) -> BinaryIO:
    """A reader of its own on the same descriptor: the reader thread may still be blocked
    in a read when toolrun exits (Ctrl-C on a silent pipe), and a read holding
    ``sys.stdin``'s lock makes the interpreter abort at shutdown."""
    try:
        fd = stdin.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return stdin  # not a file (a test's BytesIO): nothing to share
    return open(os.dup(fd), "rb")  # the reader thread closes it when it is done
