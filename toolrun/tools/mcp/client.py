"""An MCP client through the official ``mcp`` SDK: ``ClientSession`` over the SDK's
stdio, streamable-HTTP or SSE transport.

:class:`McpClient` is an async context manager. Entering it starts one task that
owns the connection (the SDK's transports and session hold task groups, which must
be left by the task that entered them): for a stdio server the SDK spawns it in its
own session, started by toolrun's reaper side process so that it never outlives toolrun
(:mod:`toolrun.tools.mcp.stdio`; ``cwd`` = the workspace, ``env`` = toolrun's
environment plus the server's ``env``, stderr kept in a file for error messages); for an HTTP server
(``url``, ``headers``) it connects. Leaving it, or :meth:`McpClient.aclose` from any
task, ends that task: the session closes and the server is stopped (stdin closed, a
grace period, SIGTERM, then everything under it killed). That runs when the
caller is cancelled (Ctrl-C) too.

Every failure is an :class:`McpError` (a :class:`toolrun.errors.ToolError`) naming
the server: it could not start, it went away (with the tail of its stderr), it did
not answer in time, or it answered with an error. ``initialize`` and ``tools/list``
have timeouts; a ``tools/call`` waits as long as its caller does (plan timeouts
cancel it).

Only this module imports the SDK, and nothing imports it at start-up.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self, TextIO, cast

import anyio
import anyio.abc

from toolrun import __version__
from toolrun.errors import ToolError

if TYPE_CHECKING:
    from mcp import ClientSession

INITIALIZE_TIMEOUT_S = 30.0
SHUTDOWN_GRACE_S = 2.0
STDERR_LIMIT = 16 * 1024  # bytes of the server's stderr quoted from (the tail)
STDERR_SHOWN_LINES = 10  # lines of that tail quoted in an error message
MAX_PAGES = 1000  # tools/list pages, against a server that never stops paginating
#: the JSON-RPC codes the SDK gives a connection that ended and a request that timed out
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001

Transport = Literal["stdio", "http", "sse"]


class McpError(ToolError):
    """An MCP server failed; the message names the server."""

    def __init__(self, server: str, reason: str, *, code: int | None = None) -> None:
        self.server = server
        self.reason = reason  # the message without the server's name
        self.code = code
        super().__init__(f"MCP server {server!r} {reason}")


def _strings(raw: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise TypeError(f"{what} must be a mapping of names to strings")
    return raw


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One server as configured (``mcpServers.<name>``, ``.mcp.json``'s shape), variables
    expanded: stdio (``command``, ``args``, ``env``) or HTTP (``type: http`` or ``sse``,
    ``url``, ``headers``)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    source: str = ""  # where it was configured (file:line), for error messages
    transport: Transport = "stdio"
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_config(
        cls,
        name: str,
        raw: Mapping[str, Any],
        *,
        source: str = "",
        environ: Mapping[str, str] | None = None,
    ) -> ServerSpec:
        """Read a server entry; ``${VAR}`` and ``${VAR:-default}`` are expanded (Claude
        Code's ``.mcp.json`` expansion) in the command, args, env, url and headers.

        ValueError or TypeError (a message to follow the server's name) when unusable.
        """
        environ = os.environ if environ is None else environ
        kind = raw.get("type")
        url = raw.get("url")
        if kind in ("http", "sse", "streamable-http") or (kind is None and url):
            if not isinstance(url, str) or not url.strip():
                raise ValueError(f"is a {kind or 'http'} server without a url")
            headers = _strings(raw.get("headers") or {}, "headers")
            return cls(
                name=name,
                source=source,
                transport="sse" if kind == "sse" else "http",
                url=expand_vars(url, environ),
                headers=MappingProxyType(
                    {str(k): expand_vars(str(v), environ) for k, v in headers.items()}
                ),
            )
        if kind not in (None, "stdio"):
            raise ValueError(f"has an unknown type {kind!r} (stdio, http or sse)")
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ValueError("has no command")
        args = raw.get("args") or []
        if not isinstance(args, Sequence) or isinstance(args, str):
            raise TypeError("args must be a list of strings")
        env = _strings(raw.get("env") or {}, "env")
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


class McpClient:
    """One MCP server, connected. Use ``async with McpClient(spec, cwd) as client``."""

    def __init__(
        self,
        spec: ServerSpec,
        cwd: Path | str,
        *,
        shutdown_grace: float = SHUTDOWN_GRACE_S,
    ) -> None:
        self.spec = spec
        self.cwd = Path(cwd)
        self.shutdown_grace = shutdown_grace  # the SDK's own grace period applies to stdio
        self.protocol_version: str | None = None
        self.capabilities: Mapping[str, Any] = {}
        self.server_info: Mapping[str, Any] = {}
        self.instructions: str | None = None
        self._session: ClientSession | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._stderr: TextIO | None = None
        self._ready = anyio.Event()
        self._stop = anyio.Event()
        self._done = anyio.Event()
        self._failure: str | None = None
        self._start_error: McpError | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def failure(self) -> str | None:
        """Why the server cannot be used any more (it went away, was shut down), or None."""
        return self._failure

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Self:
        if self.spec.transport == "stdio":
            # closed in __aexit__, after the server (which writes to it) has gone
            self._stderr = cast(
                TextIO,
                tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"),  # noqa: SIM115
            )
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        task_group.start_soon(self._serve)
        await self._ready.wait()
        if self._start_error is not None:
            await self.__aexit__(None, None, None)
            raise self._start_error
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        task_group, self._task_group = self._task_group, None
        try:
            await self.aclose()
        finally:
            if task_group is not None:
                # _serve never raises; what the body raised propagates as it is.
                await task_group.__aexit__(None, None, None)
            if self._stderr is not None:
                self._stderr.close()

    async def aclose(self) -> None:
        """Stop the server and wait until it is gone; shielded, so it completes on
        Ctrl-C too. Idempotent, from any task."""
        self._stop.set()
        with anyio.CancelScope(shield=True):
            await self._done.wait()

    async def _serve(self) -> None:
        """Owns the connection: enter the SDK's transport and session, wait for the stop,
        leave them (in this task, as their task groups require)."""
        try:
            # Shielded: the connection ends when asked to (aclose), never half-way through
            # a cancellation of whoever entered the client; that is what stops the server.
            with anyio.CancelScope(shield=True):
                async with self._connect() as session:
                    self._session = session
                    self._ready.set()
                    await self._stop.wait()
        except McpError as exc:
            self._start_error = exc
        except Exception as exc:  # noqa: BLE001 - the SDK's own errors: the server is unusable
            if not self._ready.is_set():
                self._start_error = McpError(self.name, self._with_stderr(_describe(exc)))
            self._failure = self._failure or _describe(exc)
        finally:
            self._session = None
            self._failure = self._failure or "was shut down"
            self._ready.set()
            self._done.set()

    @contextlib.asynccontextmanager
    async def _connect(self) -> AsyncIterator[ClientSession]:
        from mcp import ClientSession
        from mcp.types import Implementation

        # The SDK logs a server's protocol errors with tracebacks; toolrun reports them
        # itself (McpError), so they do not reach stderr through logging's last resort.
        logging.getLogger("mcp").addHandler(_QUIET)
        info = Implementation(name="toolrun", version=__version__)
        async with self._transport() as (read, write), ClientSession(
            read, write, client_info=info, message_handler=self._on_message
        ) as session:
            yield session

    async def _on_message(self, message: Any) -> None:
        """A line that is not JSON-RPC breaks the protocol: fail what waits, and stop."""
        if isinstance(message, Exception):
            if self.spec.transport == "stdio":
                why = f"wrote something that is not JSON-RPC on stdout: {_bad_line(message)!r}"
            else:  # the HTTP transport reports a failed request the same way
                why = f"failed at {self.spec.url}: {_describe(message)}"
            self._failure = self._failure or why
            self._stop.set()

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        spec = self.spec
        if spec.transport == "stdio":
            from toolrun.tools.mcp.stdio import reaped_stdio

            assert self._stderr is not None
            try:
                transport = reaped_stdio(
                    [spec.command, *spec.args],
                    cwd=self.cwd,
                    env={**os.environ, **spec.env},
                    stderr=self._stderr.fileno(),
                    grace=self.shutdown_grace,
                )
                streams = await transport.__aenter__()
            except (OSError, ValueError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                raise McpError(self.name, f"cannot start {spec.command!r}: {reason}") from None
            try:
                yield streams
            except BaseException as exc:
                if not await transport.__aexit__(type(exc), exc, exc.__traceback__):
                    raise
            else:
                await transport.__aexit__(None, None, None)
            return
        from mcp.shared._httpx_utils import create_mcp_http_client

        async with create_mcp_http_client(headers=dict(spec.headers)) as http:
            if spec.transport == "sse":
                from mcp.client.sse import sse_client

                async with sse_client(spec.url, headers=dict(spec.headers)) as streams:
                    yield streams
            else:
                from mcp.client.streamable_http import streamable_http_client

                async with streamable_http_client(spec.url, http_client=http) as streams:
                    yield streams

    # ------------------------------------------------------------------ errors

    def stderr_tail(self, lines: int = STDERR_SHOWN_LINES) -> str:
        """The last lines the server wrote to stderr."""
        err = self._stderr
        if err is None or err.closed:
            return ""
        try:
            err.flush()
            size = err.seek(0, os.SEEK_END)
            err.seek(max(0, size - STDERR_LIMIT))
            text = err.read()
        except (OSError, ValueError):
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def _with_stderr(self, reason: str) -> str:
        tail = self.stderr_tail()
        if not tail:
            return reason
        return f"{reason}; its stderr ends with:\n" + "\n".join(f"  {x}" for x in tail.splitlines())

    def _gone(self) -> str:
        if self.spec.transport == "stdio":
            return "closed the connection (it exited or crashed)"
        return f"closed the connection or could not be reached at {self.spec.url}"

    def _live(self) -> ClientSession:
        session = self._session
        if session is None or self._failure is not None:
            raise McpError(self.name, self._with_stderr(self._failure or "is not running"))
        return session

    async def _request(self, what: str, call: Any, time_limit: float | None) -> Any:
        """Run one SDK request; every failure becomes an McpError naming the server."""
        from mcp.shared.exceptions import MCPError

        session = self._live()
        try:
            with anyio.fail_after(time_limit):
                return await call(session)
        except TimeoutError:
            raise McpError(
                self.name, self._with_stderr(f"did not answer {what} within {time_limit:g} s")
            ) from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._failure = self._failure or self._gone()
                raise McpError(self.name, self._with_stderr(self._failure), code=exc.code) from None
            if exc.code == REQUEST_TIMEOUT:
                raise McpError(
                    self.name, self._with_stderr(f"did not answer {what} in time")
                ) from None
            raise McpError(
                self.name,
                f"answered {what} with an error: {exc.message} (JSON-RPC error {exc.code})",
                code=exc.code,
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            self._failure = self._failure or self._gone()
            raise McpError(self.name, self._with_stderr(self._failure)) from None
        except (OSError, ValueError, RuntimeError) as exc:
            reason = f"failed {what}: {_describe(exc)}"
            raise McpError(self.name, self._with_stderr(reason)) from None

    # ------------------------------------------------------------------ MCP

    async def initialize(self, *, time_limit: float | None = INITIALIZE_TIMEOUT_S) -> None:
        """The handshake (the SDK negotiates the protocol version)."""

        async def call(session: ClientSession) -> Any:
            return await session.initialize()

        result = await self._request("initialize", call, time_limit)
        self.protocol_version = str(result.protocol_version)
        self.capabilities = result.capabilities.model_dump(exclude_none=True)
        self.server_info = result.server_info.model_dump(exclude_none=True)
        self.instructions = result.instructions

    async def list_tools(
        self, *, time_limit: float | None = INITIALIZE_TIMEOUT_S
    ) -> list[dict[str, Any]]:
        """Every tool the server offers (all pages), as JSON objects (MCP's field names).

        A server that does not declare the tools capability and refuses simply has none.
        """
        from mcp.types import PaginatedRequestParams

        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            params = PaginatedRequestParams(cursor=cursor) if cursor is not None else None

            async def call(session: ClientSession, params: Any = params) -> Any:
                return await session.list_tools(params=params)

            try:
                result = await self._request("tools/list", call, time_limit)
            except McpError as exc:
                if exc.code not in (None, CONNECTION_CLOSED) and "tools" not in self.capabilities:
                    return []
                raise
            tools.extend(
                t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools
            )
            cursor = result.next_cursor
            if not cursor:
                return tools
            if cursor in seen:
                raise McpError(self.name, f"repeated the tools/list cursor {cursor!r}")
            seen.add(cursor)
        raise McpError(self.name, f"listed more than {MAX_PAGES} pages of tools")

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``tools/call``: the result as JSON (``content``, ``isError``, ``structuredContent``)."""

        async def call(session: ClientSession) -> Any:
            return await session.call_tool(name, dict(arguments))

        result = await self._request("tools/call", call, None)
        data: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return data


def _bad_line(exc: Exception) -> str:
    """The offending line, from the SDK's parse error (pydantic keeps the input)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            line = errors()[0].get("input")
            if isinstance(line, str | bytes):
                text = line if isinstance(line, str) else line.decode("utf-8", "replace")
                return text if len(text) <= 120 else text[:120] + "…"
    return str(exc)[:120]


_QUIET = logging.NullHandler()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return str(exc) or type(exc).__name__
