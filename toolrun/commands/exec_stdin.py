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

import array
import contextlib
import io
import os
import threading
from collections import deque
from collections.abc import AsyncGenerator, Iterator
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
# At most this many lines go from the reader thread to the event loop at once (fewer when
# the per-turn limit is lower); what one read brings, up to CHUNK_BYTES.
BATCH_LINES = 256
CHUNK_BYTES = 64 * 1024
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
        self._receive: MemoryObjectReceiveStream[list[tuple[int, bytes | None]]] | None = None
        self.read = 0  # lines taken off stdin (handed to the queue)
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
        self,
        send: MemoryObjectSendStream[list[tuple[int, bytes | None]]],
        token: EventLoopToken,
        size: int,
    ) -> None:
        # A plain daemon thread: a read blocked on a silent pipe must not keep toolrun alive.
        # It hands lines over a batch at a time (whatever one read brought, at most
        # ``size``), so a fast writer costs one hop to the event loop per batch, not per
        # line, and the loop finds whole turns waiting.
        with contextlib.suppress(Exception):
            for batch in _batches(self._stdin, size):
                if self._stopped.is_set():
                    break
                # blocks while the queue is full: backpressure on whoever writes stdin
                anyio.from_thread.run(send.send, batch, token=token)
                self.read = batch[-1][0]
        with contextlib.suppress(Exception):
            anyio.from_thread.run_sync(send.close, token=token)
        if self._stdin is not self._given:
            self._stdin.close()

    async def turns(self) -> AsyncGenerator[tuple[Turn, list[Result]], None]:
        limit = self._executor.settings.max_calls_per_turn
        # Batches no larger than a turn: lines taken off the queue but left over when the
        # run stops stay fewer than a turn.
        size = max(1, min(limit, BATCH_LINES))
        send, receive = anyio.create_memory_object_stream[list[tuple[int, bytes | None]]](
            QUEUE_LINES // size
        )
        self._receive = receive
        token = anyio.lowlevel.current_token()
        threading.Thread(
            target=self._reader, args=(send, token, size), name="stdin-calls", daemon=True
        ).start()
        seen_ids = StreamIds()
        waiting: deque[tuple[int, bytes | None]] = deque()  # taken off the queue, not used
        index = 0
        turn = 0
        with receive:
            while not self._stopped.is_set():
                if not waiting:
                    with anyio.CancelScope() as self._waiting:
                        try:
                            waiting.extend(await receive.receive())
                        except (anyio.EndOfStream, anyio.ClosedResourceError):
                            return
                    self._waiting = None
                if self._stopped.is_set():
                    return
                while len(waiting) < limit:
                    try:
                        waiting.extend(receive.receive_nowait())
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                batch = [waiting.popleft() for _ in range(min(limit, len(waiting)))]
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
        self, text: str, number: int, index: int, turn: int, seen_ids: StreamIds
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


def _batches(stdin: BinaryIO, size: int) -> Iterator[list[tuple[int, bytes | None]]]:
    """stdin's lines, numbered from 1, in batches of what one read brought (at most
    ``size``). A line longer than :data:`MAX_LINE_BYTES` comes as ``None`` and
    ends the batches: nothing after it is read. A last line without a newline counts."""
    read = getattr(stdin, "read1", None) or stdin.readline
    number = 0
    partial = bytearray()
    while chunk := read(CHUNK_BYTES):
        lines = chunk.split(b"\n")
        if partial:
            partial += lines[0]
            lines[0] = bytes(partial)
            partial.clear()
        partial += lines.pop()  # the part after the last newline: not a line yet
        batch: list[tuple[int, bytes | None]] = []
        for raw in lines:
            number += 1
            too_long = len(raw) > MAX_LINE_BYTES
            batch.append((number, None if too_long else raw))
            if too_long or len(batch) == size:
                yield batch
                batch = []
                if too_long:
                    return
        if len(partial) > MAX_LINE_BYTES:
            yield [*batch, (number + 1, None)]
            return
        if batch:
            yield batch
    if partial:
        yield [(number + 1, bytes(partial))]


AHEAD = 1 << 16  # an id call-N this far past the calls so far is kept as a string


class StreamIds(dict[str, Location]):
    """The ids seen so far in a stream, for duplicate checks, in memory that does not grow
    with the usual id: ``call-N`` given to the call at index N-1 is kept as one number per
    call (its line), not as a string and a :class:`Location`. Any other id is kept as is."""

    def __init__(self) -> None:
        super().__init__()
        self._lines = array.array("Q")  # by index: the line of call-(index+1), or 0

    def _auto(self, key: str) -> int | None:
        """N-1 for a key ``call-N`` (N no further ahead than a call could be yet), else None."""
        digits = key[5:]
        if not key.startswith("call-") or not (digits.isascii() and digits.isdigit()):
            return None
        if digits[0] == "0" or len(digits) > 18:
            return None
        at = int(digits) - 1
        return at if at < len(self._lines) + AHEAD else None

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            at = self._auto(key)
            if at is not None and at < len(self._lines) and self._lines[at]:
                return True
        return super().__contains__(key)

    def __getitem__(self, key: str) -> Location:
        at = self._auto(key)
        if at is not None and at < len(self._lines) and self._lines[at]:
            return Location("-", self._lines[at], 1)
        return super().__getitem__(key)

    def __setitem__(self, key: str, value: Location) -> None:
        at = self._auto(key)
        if at is not None and value.column == 1 and value.file == "-" and value.line > 0:
            if at >= len(self._lines):
                self._lines.extend([0] * (at + 1 - len(self._lines)))
            self._lines[at] = value.line
            return
        super().__setitem__(key, value)


def _own_reader(stdin: BinaryIO) -> BinaryIO:
    """A reader of its own on the same descriptor: the reader thread may still be blocked
    in a read when toolrun exits (Ctrl-C on a silent pipe), and a read holding
    ``sys.stdin``'s lock makes the interpreter abort at shutdown."""
    try:
        fd = stdin.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return stdin  # not a file (a test's BytesIO): nothing to share
    return open(os.dup(fd), "rb")  # the reader thread closes it when it is done
