"""A minimal MCP client over stdio: JSON-RPC 2.0, one JSON message a line.

:class:`McpClient` is an async context manager. Entering it starts the server in
its own process group (``env`` = toolrun's environment plus the server's ``env``,
``cwd`` = the workspace) and starts two reader tasks: stdout (responses, matched
to their requests by id) and stderr (kept, bounded, for error messages). Leaving
it shuts the server down even when the surrounding scope is cancelled: stdin is
closed, the server gets a short grace period to exit, then its whole process
group is killed.

Every failure is an :class:`McpError` (a :class:`toolrun.errors.ToolError`) that
names the server: it could not start, it exited, it wrote something that is not
JSON-RPC, it did not answer in time, or it answered with a JSON-RPC error.
A server that exited or broke the protocol fails every pending and later request.

Only ``initialize`` and ``tools/list`` have timeouts; a ``tools/call`` waits as
long as its caller does (the executor applies plan timeouts by cancelling). A
cancelled request is announced to the server with ``notifications/cancelled``,
best-effort.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Any, Self

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from toolrun import __version__
from toolrun.errors import ToolError

PROTOCOL_VERSION = "2025-06-18"
INITIALIZE_TIMEOUT_S = 30.0
SHUTDOWN_GRACE_S = 2.0
STDERR_LIMIT = 16 * 1024  # bytes of the server's stderr kept (the tail)
STDERR_SHOWN_LINES = 10  # lines of that tail quoted in an error message
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_PAGES = 1000  # tools/list pages, against a server that never stops paginating

# JSON-RPC error codes
METHOD_NOT_FOUND = -32601


class McpError(ToolError):
    """An MCP server failed; the message names the server."""

    def __init__(self, server: str, reason: str, *, code: int | None = None) -> None:
        self.server = server
        self.reason = reason  # the message without the server's name
        self.code = code
        super().__init__(f"MCP server {server!r} {reason}")


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One stdio server as configured (``mcpServers.<name>``), variables expanded."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    source: str = ""  # where it was configured (file:line), for error messages

    @classmethod
    def from_config(
        cls,
        name: str,
        raw: Mapping[str, Any],
        *,
        source: str = "",
        environ: Mapping[str, str] | None = None,
    ) -> ServerSpec:
        """Read ``{command, args, env}``; ``${VAR}`` and ``${VAR:-default}`` are expanded
        (Claude Code's ``.mcp.json`` expansion) in all three.

        ValueError or TypeError (a message to follow the server's name) when unusable.
        """
        environ = os.environ if environ is None else environ
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            if raw.get("url"):
                raise ValueError(
                    f"is an HTTP server (url: {raw['url']}); "
                    "only stdio servers (command, args, env) are supported yet"
                )
            raise ValueError("has no command")
        args = raw.get("args") or []
        if not isinstance(args, Sequence) or isinstance(args, str):
            raise TypeError("args must be a list of strings")
        env = raw.get("env") or {}
        if not isinstance(env, Mapping):
            raise TypeError("env must be a mapping of names to strings")
        return cls(
            name=name,
            command=expand_vars(command, environ),
            args=tuple(expand_vars(str(a), environ) for a in args),
            env=MappingProxyType({str(k): expand_vars(str(v), environ) for k, v in env.items()}),
            source=source,
        )

    def describe(self) -> str:
        """``name`` plus where it was configured, for messages."""
        return f"{self.name!r} ({self.source})" if self.source else repr(self.name)


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_vars(text: str, environ: Mapping[str, str]) -> str:
    """``${VAR}`` → its value, ``${VAR:-default}`` → its value or the default.

    An unset variable without a default is a ValueError (as in Claude Code).
    """

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if value is not None and (value or default is None):
            return value
        if default is not None:
            return default
        raise ValueError(f"uses ${{{name}}}, which is not set (write ${{{name}:-default}})")

    return _VAR.sub(substitute, text)


class _Pending:
    __slots__ = ("error", "event", "response")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.response: Mapping[str, Any] | None = None
        self.error: str | None = None


def _preview(data: bytes | str, limit: int = 120) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = text.strip()
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class McpClient:
    """One running stdio MCP server. Use ``async with McpClient(spec, cwd) as client``."""

    def __init__(
        self,
        spec: ServerSpec,
        cwd: Path | str,
        *,
        shutdown_grace: float = SHUTDOWN_GRACE_S,
    ) -> None:
        self.spec = spec
        self.cwd = Path(cwd)
        self.shutdown_grace = shutdown_grace
        self.protocol_version: str | None = None
        self.capabilities: Mapping[str, Any] = {}
        self.server_info: Mapping[str, Any] = {}
        self.instructions: str | None = None
        self._process: anyio.abc.Process | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self._write_lock = anyio.Lock()
        self._stderr = bytearray()
        self._stderr_done = anyio.Event()
        self._gone = anyio.Event()  # stdout closed or the protocol broke
        self._failure: str | None = None
        self._closing = False
        self._closed = False

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def failure(self) -> str | None:
        """Why the server cannot be used any more (it exited, broke the protocol), or None."""
        return self._failure

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Self:
        env = {**os.environ, **self.spec.env}
        try:
            self._process = await anyio.open_process(
                [self.spec.command, *self.spec.args],
                cwd=self.cwd,
                env=env,
                start_new_session=True,  # its own process group, killed as a whole
            )
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise McpError(self.name, f"cannot start {self.spec.command!r}: {reason}") from None
        task_group = anyio.create_task_group()
        try:
            await task_group.__aenter__()
        except BaseException:
            await self.aclose()
            raise
        self._task_group = task_group
        task_group.start_soon(self._read_stdout)
        task_group.start_soon(self._read_stderr)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        task_group, self._task_group = self._task_group, None
        try:
            await self.aclose()  # the readers end with the server's output
        finally:
            if task_group is not None:
                task_group.cancel_scope.cancel()
                # The readers never raise, and what the body raised is not the task
                # group's business: it propagates as it is (no ExceptionGroup).
                await task_group.__aexit__(None, None, None)

    async def aclose(self) -> None:
        """Shut the server down: close stdin, wait briefly, kill its process group.

        Shielded from cancellation, so it completes on Ctrl-C too. Idempotent.
        """
        if self._closed or self._process is None:
            return
        self._closed = True
        self._closing = True
        process = self._process
        with anyio.CancelScope(shield=True):
            if process.stdin is not None:
                with contextlib.suppress(Exception):
                    await process.stdin.aclose()
            with anyio.move_on_after(self.shutdown_grace):
                await process.wait()
            if process.returncode is None:
                _signal_group(process.pid, signal.SIGTERM)
                with anyio.move_on_after(min(0.5, self.shutdown_grace)):
                    await process.wait()
            # Always: whatever the server left behind in its group goes too.
            _signal_group(process.pid, signal.SIGKILL)
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            with anyio.move_on_after(5):
                await process.wait()
            with contextlib.suppress(Exception):
                await process.aclose()
        self._fail("was shut down")

    # ------------------------------------------------------------------ readers

    async def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stream = BufferedByteReceiveStream(self._process.stdout)
        try:
            while self._failure is None:
                try:
                    line = await stream.receive_until(b"\n", MAX_MESSAGE_BYTES)
                except anyio.DelimiterNotFound:
                    self._fail(f"sent a message longer than {MAX_MESSAGE_BYTES} bytes")
                    return
                except (
                    anyio.IncompleteRead,
                    anyio.EndOfStream,
                    anyio.ClosedResourceError,
                    anyio.BrokenResourceError,
                ):
                    await self._on_stdout_closed()
                    return
                self._handle_line(line)
        except Exception as exc:  # noqa: BLE001 - must never take the caller's task group down
            self._fail(f"could not be read: {type(exc).__name__}: {exc}")
        finally:
            self._gone.set()

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        # Closed or broken during shutdown: there is nothing more to keep.
        with contextlib.suppress(Exception):
            async for chunk in self._process.stderr:
                self._stderr += chunk
                if len(self._stderr) > 2 * STDERR_LIMIT:
                    del self._stderr[:-STDERR_LIMIT]
        self._stderr_done.set()

    async def _on_stdout_closed(self) -> None:
        if self._closing:
            return
        process = self._process
        assert process is not None
        code: int | None = None
        with anyio.move_on_after(1):
            code = await process.wait()
        with anyio.move_on_after(0.5):
            await self._stderr_done.wait()
        if code is None:
            self._fail("closed its output")
        elif code < 0:
            self._fail(f"was killed by signal {-code}")
        else:
            self._fail(f"exited with code {code}")

    def _handle_line(self, line: bytes) -> None:
        text = line.strip()
        if not text:
            return
        try:
            message = json.loads(text)
        except ValueError:
            self._fail(f"wrote something that is not JSON-RPC on stdout: {_preview(text)}")
            return
        messages = message if isinstance(message, list) else [message]
        for item in messages:
            if not isinstance(item, dict) or ("method" not in item and "id" not in item):
                self._fail(f"wrote something that is not JSON-RPC on stdout: {_preview(text)}")
                return
            self._dispatch(item)

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message and self._task_group is not None:
                # A request from the server: answer ping, refuse the rest (no capabilities).
                self._task_group.start_soon(self._answer, message["id"], method)
            return  # notifications (logging, list_changed, progress) are ignored
        request_id = message.get("id")
        pending = self._pending.get(request_id) if isinstance(request_id, int) else None
        if pending is not None and not pending.event.is_set():
            pending.response = message
            pending.event.set()
        # a response to a request given up (cancelled, timed out) is dropped

    async def _answer(self, request_id: Any, method: str) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if method == "ping":
            reply["result"] = {}
        else:
            reply["error"] = {
                "code": METHOD_NOT_FOUND,
                "message": f"toolrun does not support {method}",
            }
        with contextlib.suppress(Exception):
            await self._send(reply)

    def _fail(self, reason: str) -> None:
        if self._failure is not None:
            return
        self._failure = reason
        self._gone.set()
        for pending in self._pending.values():
            if not pending.event.is_set():
                pending.error = reason
                pending.event.set()

    def stderr_tail(self, lines: int = STDERR_SHOWN_LINES) -> str:
        """The last lines the server wrote to stderr."""
        text = bytes(self._stderr[-STDERR_LIMIT:]).decode("utf-8", "replace")
        return "\n".join(text.strip().splitlines()[-lines:])

    def _with_stderr(self, reason: str) -> str:
        tail = self.stderr_tail()
        if not tail:
            return reason
        return f"{reason}; its stderr ends with:\n" + "\n".join(f"  {x}" for x in tail.splitlines())

    # ------------------------------------------------------------------ messages

    async def _send(self, message: Mapping[str, Any]) -> None:
        process = self._process
        if process is None or process.stdin is None:
            raise McpError(self.name, "is not running")
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str)
        try:
            async with self._write_lock:
                await process.stdin.send(data.encode("utf-8") + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            if not self._closing:
                with anyio.move_on_after(1.5):  # let the reader find out why
                    await self._gone.wait()
            reason = self._failure or "is not reading its input"
            raise McpError(self.name, self._with_stderr(reason)) from None

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        await self._send(message)

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        time_limit: float | None = None,
    ) -> dict[str, Any]:
        """Send a request and wait for its result (a JSON object).

        McpError when the server fails, does not answer within ``time_limit`` or answers
        with an error. Cancelling the caller tells the server (``notifications/cancelled``).
        """
        if self._failure is not None:
            raise McpError(self.name, self._with_stderr(self._failure))
        self._next_id += 1
        request_id = self._next_id
        pending = _Pending()
        self._pending[request_id] = pending
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = dict(params)
        try:
            with anyio.fail_after(time_limit):
                await self._send(message)
                await pending.event.wait()
        except TimeoutError:
            waited = f"{time_limit:g} s"
            await self._cancelled(request_id, method, f"no answer within {waited}")
            raise McpError(
                self.name, self._with_stderr(f"did not answer {method} within {waited}")
            ) from None
        except anyio.get_cancelled_exc_class():
            await self._cancelled(request_id, method, "cancelled by toolrun")
            raise
        finally:
            del self._pending[request_id]
        if pending.error is not None:
            raise McpError(self.name, self._with_stderr(pending.error))
        response = pending.response
        assert response is not None
        error = response.get("error")
        if error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            text = error.get("message") if isinstance(error, dict) else None
            detail = f" (JSON-RPC error {code})" if isinstance(code, int) else ""
            raise McpError(
                self.name,
                f"answered {method} with an error: {text or repr(error)}{detail}",
                code=code if isinstance(code, int) else None,
            )
        result = response.get("result")
        if not isinstance(result, dict):
            raise McpError(self.name, f"answered {method} without a result object")
        return result

    async def _cancelled(self, request_id: int, method: str, reason: str) -> None:
        """Tell the server a request was given up (never for initialize), best-effort."""
        if method == "initialize" or self._failure is not None:
            return
        with anyio.move_on_after(1, shield=True), contextlib.suppress(McpError):
            await self.notify(
                "notifications/cancelled", {"requestId": request_id, "reason": reason}
            )

    # ------------------------------------------------------------------ MCP

    async def initialize(self, *, time_limit: float | None = INITIALIZE_TIMEOUT_S) -> None:
        """The handshake: ``initialize`` (whatever version the server answers), then
        ``notifications/initialized``."""
        result = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "toolrun", "version": __version__},
            },
            time_limit=time_limit,
        )
        version = result.get("protocolVersion")
        if not isinstance(version, str):
            raise McpError(self.name, "answered initialize without a protocolVersion")
        self.protocol_version = version
        capabilities = result.get("capabilities")
        self.capabilities = capabilities if isinstance(capabilities, dict) else {}
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        await self.notify("notifications/initialized")

    async def list_tools(
        self, *, time_limit: float | None = INITIALIZE_TIMEOUT_S
    ) -> list[dict[str, Any]]:
        """Every tool the server offers (all pages of ``tools/list``).

        A server that does not declare the tools capability and refuses the request
        simply has no tools.
        """
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            try:
                result = await self.request(
                    "tools/list",
                    {"cursor": cursor} if cursor is not None else None,
                    time_limit=time_limit,
                )
            except McpError as exc:
                if exc.code is not None and "tools" not in self.capabilities:
                    return []
                raise
            page = result.get("tools")
            if not isinstance(page, list):
                raise McpError(self.name, "answered tools/list without a list of tools")
            for tool in page:
                if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                    raise McpError(
                        self.name, f"listed a tool without a name: {_preview(json.dumps(tool))}"
                    )
                tools.append(tool)
            next_cursor = result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor:
                return tools
            if next_cursor in seen:
                raise McpError(self.name, f"repeated the tools/list cursor {next_cursor!r}")
            seen.add(next_cursor)
            cursor = next_cursor
        raise McpError(self.name, f"listed more than {MAX_PAGES} pages of tools")

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``tools/call``: the raw result (``content``, ``isError``, ``structuredContent``)."""
        return await self.request("tools/call", {"name": name, "arguments": dict(arguments)})
