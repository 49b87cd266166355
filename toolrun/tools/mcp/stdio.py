"""The stdio transport for MCP servers, started by toolrun's reaper side process.

The SDK's own ``stdio_client`` starts the server as a child of toolrun in a process
group of its own: when toolrun is killed (SIGKILL, its terminal closed), nobody stops
the server, nor what it started (``npx`` and ``uvx`` servers are a wrapper and a child),
and they run on with ppid 1. Started by the reaper side process instead, like Bash and
hook commands, a server and all it leaves are killed when toolrun goes, however it goes
(:mod:`toolrun.reaper`).

The streams are the SDK's: one JSON-RPC message a line on the server's stdin and
stdout, parsed by the SDK's own adapter; a line that is not one is handed to the session
as an exception (as the SDK's transport does). Shutdown follows the MCP lifecycle: stdin
closed, a grace period, SIGTERM to its process group, a second grace period, then the
reaper kills its whole tree.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

    from toolrun.reaper.link import Command

#: After stdin closes, how long the server has to exit; then SIGTERM, as long again.
GRACE_S = 2.0
#: How long the messages already accepted have to reach the server at shutdown.
FLUSH_S = 0.5
#: The longest line (one message) read from a server: beyond it the connection fails
#: rather than toolrun's memory.
MAX_LINE_BYTES = 64 * 1024 * 1024
READ_BYTES = 65536


class LineTooLong(ValueError):
    """A server wrote more than MAX_LINE_BYTES without a line break."""


@contextlib.asynccontextmanager
async def reaped_stdio(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str],
    stderr: int,
    grace: float = GRACE_S,
) -> AsyncIterator[tuple[Any, Any]]:
    """Start ``argv`` under the reaper, its stderr into descriptor ``stderr``; yield the
    SDK's (read, write) streams. OSError when it cannot start."""
    from mcp.shared.message import SessionMessage

    from toolrun.reaper.link import launch

    to_server_r, to_server = os.pipe()
    from_server, from_server_w = os.pipe()
    try:
        command = launch(argv, cwd=cwd, env=env, stdin=to_server_r, stdout=from_server_w,
                         stderr=stderr)
    except BaseException:
        os.close(to_server)
        os.close(from_server)
        raise
    finally:
        os.close(to_server_r)
        os.close(from_server_w)
    os.set_blocking(to_server, False)
    os.set_blocking(from_server, False)
    pipes = _Pipes(to_server, from_server)
    try:
        try:
            await command.started()
        except OSError:
            command.close()
            raise
        reader_send, read_stream = anyio.create_memory_object_stream[Any](0)
        write_stream, writer_receive = anyio.create_memory_object_stream[SessionMessage](0)
        written = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_read, pipes, reader_send)
            tg.start_soon(_write, pipes, writer_receive, reader_send, written)
            try:
                yield read_stream, write_stream
            finally:
                # The server must be stopped even when the caller is cancelled.
                with anyio.CancelScope(shield=True):
                    read_stream.close()
                    write_stream.close()
                    with anyio.move_on_after(FLUSH_S):
                        await written.wait()
                    pipes.close_stdin()
                    await _stop(command, grace)
                tg.cancel_scope.cancel()
    finally:
        command.close()  # still running (a cancel in the start): its whole tree is killed
        pipes.close()


class _Pipes:
    """Our ends of the server's stdin and stdout (non-blocking)."""

    def __init__(self, stdin: int, stdout: int) -> None:
        self.stdin = stdin
        self.stdout = stdout

    def close_stdin(self) -> None:
        if self.stdin >= 0:
            os.close(self.stdin)
            self.stdin = -1

    def close(self) -> None:
        self.close_stdin()
        if self.stdout >= 0:
            os.close(self.stdout)
            self.stdout = -1


async def _read(pipes: _Pipes, sink: MemoryObjectSendStream[Any]) -> None:
    """The server's stdout, a message a line, to the session; at its end, the end."""
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    buffer = bytearray()
    async with sink:
        while True:
            await anyio.wait_readable(pipes.stdout)
            try:
                chunk = os.read(pipes.stdout, READ_BYTES)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                return
            buffer += chunk
            *lines, rest = buffer.split(b"\n")
            buffer = bytearray(rest)
            if len(buffer) > MAX_LINE_BYTES:  # the session fails, and the connection ends
                item: Any = LineTooLong(f"wrote a line longer than {MAX_LINE_BYTES} bytes")
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await sink.send(item)
                return
            for line in lines:
                if not line.strip():
                    continue
                try:
                    item = SessionMessage(
                        jsonrpc_message_adapter.validate_json(
                            line.decode("utf-8", "replace"), by_name=False  # (errors quote it)
                        )
                    )
                except ValueError as exc:  # pydantic's ValidationError: not JSON-RPC
                    item = exc
                try:
                    await sink.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return  # the session is gone


async def _write(
    pipes: _Pipes,
    source: MemoryObjectReceiveStream[Any],
    reader: MemoryObjectSendStream[Any],
    written: anyio.Event,
) -> None:
    """The session's messages, a line each, to the server's stdin."""
    try:
        async with source:
            async for message in source:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                view = memoryview((data + "\n").encode("utf-8"))
                while view:
                    try:
                        view = view[os.write(pipes.stdin, view) :]
                    except BlockingIOError:
                        await anyio.wait_writable(pipes.stdin)
    except OSError:  # EPIPE: the server no longer reads; the session must see the end
        await reader.aclose()
    finally:
        written.set()


async def _stop(command: Command, grace: float) -> None:
    """Wait for the server to exit after its stdin closed; then SIGTERM its group, and
    after that the reaper kills everything under it."""
    with anyio.move_on_after(grace):
        await command.wait()
    if command.returncode is None:
        command.signal_group(signal.SIGTERM)
        with anyio.move_on_after(grace):
            await command.wait()
    if command.returncode is not None:
        await command.sweep()  # what it left running (its own children, daemons)
