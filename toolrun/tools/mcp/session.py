"""Starting the configured MCP servers, registering their tools, shutting them down."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple, Self

import anyio

from toolrun.errors import ConfigError, Problem
from toolrun.tools.mcp.client import (
    INITIALIZE_TIMEOUT_S,
    SHUTDOWN_GRACE_S,
    McpClient,
    McpError,
    ServerSpec,
)
from toolrun.tools.mcp.tools import McpTool, unavailable_family

if TYPE_CHECKING:
    from toolrun.config.models import Config
    from toolrun.tools.registry import ToolRegistry


_log = logging.getLogger("toolrun.mcp")


class McpListing(NamedTuple):
    """What :func:`list_mcp_tools` found: detached tools, warnings about tools left out,
    and why each server that could not be started did not (by name)."""

    tools: list[McpTool]
    warnings: list[str]
    failures: Mapping[str, str] = {}


class McpStartupError(ConfigError):
    """One or more configured MCP servers could not be started; one line each.

    A config problem (exit 3). (No longer raised by :class:`McpServers`, where such a
    server fails only the calls that use it; kept for callers that want it fatal.)
    """

    def __init__(self, failures: Sequence[str]) -> None:
        self.failures = tuple(failures)
        super().__init__([Problem(None, "", line) for line in self.failures])


def server_sources(config: Config) -> dict[str, str]:
    """``file:line:col`` of each server's ``mcpServers.<name>`` key, for error messages.

    The first file (highest precedence) that defines a name is the one that was used.
    Files that cannot be read again simply give no source.
    """
    from toolrun.paths import display_path
    from toolrun.yamlfile import DocumentError, load_document

    out: dict[str, str] = {}
    for file in config.files:
        try:
            doc = load_document(Path(file), display=display_path(file))
        except (DocumentError, OSError):
            continue
        servers = doc.data.get("mcpServers") if isinstance(doc.data, dict) else None
        if not isinstance(servers, dict):
            continue
        for name in servers:
            if name in config.mcp_servers and name not in out:
                out[name] = str(doc.locate(("mcpServers", name)))
    return out


class McpServers:
    """The configured MCP servers (stdio or HTTP), running, and their tools.

    ``async with McpServers(config.mcp_servers, workspace, registry=registry) as mcp:``
    starts every server concurrently (each in its own process group, ``cwd`` = the
    workspace), runs the ``initialize`` handshake, lists the tools and registers one
    :class:`McpTool` per tool into ``registry`` with source ``mcp:<server>``. Leaving
    the block shuts every server down, also on cancellation and Ctrl-C; the tools stay
    registered but can no longer run.

    A server that could not be started (it does not exist, exits at once, fails the
    handshake) fails only the calls that use it: ``failures`` says why (name → message
    naming where it was configured, ``sources``: name → ``file:line``), logged as a
    warning, and every ``mcp__<server>__*`` name is registered as a tool that fails with
    that message. Nothing of it is left running.
    """

    def __init__(
        self,
        servers: Mapping[str, Mapping[str, Any]],
        workspace: Path | str,
        *,
        registry: ToolRegistry | None = None,
        sources: Mapping[str, str] | None = None,
        startup_timeout: float = INITIALIZE_TIMEOUT_S,
        shutdown_grace: float = SHUTDOWN_GRACE_S,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.servers = dict(servers)
        self.workspace = Path(workspace)
        self.registry = registry
        self.sources = dict(sources or {})
        self.startup_timeout = startup_timeout
        self.shutdown_grace = shutdown_grace
        self.environ = environ
        self.clients: dict[str, McpClient] = {}
        self.tools: list[McpTool] = []
        self.warnings: list[str] = []  # tools left out (duplicate names)
        self.failures: dict[str, str] = {}  # servers that could not be started: why
        self._stack: contextlib.AsyncExitStack | None = None

    @classmethod
    def from_config(
        cls, config: Config, registry: ToolRegistry | None = None, **options: Any
    ) -> McpServers:
        """The servers of a loaded config, with their sources, in its workspace."""
        sources = server_sources(config) if config.mcp_servers else {}
        return cls(
            config.mcp_servers, config.workspace, registry=registry, sources=sources, **options
        )

    def _where(self, name: str) -> str:
        source = self.sources.get(name)
        return f"{source}: " if source else ""

    def _failure(self, name: str, reason: str) -> str:
        return f"{self._where(name)}MCP server {name!r} could not be started: {reason}"

    async def __aenter__(self) -> Self:
        if self._stack is not None:
            raise RuntimeError("McpServers is already running")
        self.tools, self.warnings, self.failures = [], [], {}
        failures = self.failures
        specs: list[ServerSpec] = []
        for name, raw in self.servers.items():
            try:
                specs.append(
                    ServerSpec.from_config(
                        name, raw, source=self.sources.get(name, ""), environ=self.environ
                    )
                )
            except (ValueError, TypeError) as exc:
                failures[name] = f"{self._where(name)}MCP server {name!r} {exc}"
        listed: dict[str, list[dict[str, Any]]] = {}
        async with contextlib.AsyncExitStack() as stack:
            for spec in specs:
                client = McpClient(spec, self.workspace, shutdown_grace=self.shutdown_grace)
                try:
                    self.clients[spec.name] = await stack.enter_async_context(client)
                except McpError as exc:
                    failures[spec.name] = self._failure(spec.name, exc.reason)

            async def handshake(client: McpClient) -> None:
                try:
                    await client.initialize(time_limit=self.startup_timeout)
                    listed[client.name] = await client.list_tools(time_limit=self.startup_timeout)
                except McpError as exc:
                    failures[client.name] = self._failure(client.name, exc.reason)

            async with anyio.create_task_group() as tg:
                for client in self.clients.values():
                    tg.start_soon(handshake, client)
            failed = [self.clients.pop(n) for n in list(self.clients) if n in failures]
            if failed:  # stopped now, each with its grace period at once
                with anyio.CancelScope(shield=True):
                    async with anyio.create_task_group() as tg:
                        for client in failed:
                            tg.start_soon(client.aclose)
            for name in self.servers:
                if name in failures:
                    _log.warning("warning: %s; the calls to its tools fail", failures[name])
                for definition in listed.get(name, []) if name not in failures else ():
                    self._add(name, definition, self.clients[name])
            if self.registry is not None:
                self.register(self.registry)
            self._stack = stack.pop_all()
        return self

    def _add(self, server: str, definition: dict[str, Any], client: McpClient) -> None:
        try:
            tool = McpTool(server, definition, client)
        except Exception as exc:  # noqa: BLE001 - one odd tool must not sink its server
            self.warnings.append(
                f"MCP server {server!r}: tool {definition.get('name')!r} is left out: {exc}"
            )
            return
        other = next((t for t in self.tools if t.name == tool.name), None)
        if other is not None:
            self.warnings.append(
                f"MCP server {tool.server!r}: tool {tool.tool_name!r} is left out, "
                f"its name {tool.name} is taken by {other.tool_name!r}"
            )
            return
        self.tools.append(tool)

    def register(self, registry: ToolRegistry) -> None:
        """Add the tools to ``registry`` (source ``mcp:<server>``); a name already taken
        (by a built-in or a plugin) leaves the MCP tool out, with a warning. The tools
        of a server that could not be started fail with why."""
        for tool in self.tools:
            try:
                registry.register(tool, source=f"mcp:{tool.server}")
            except ValueError as exc:
                self.warnings.append(f"MCP server {tool.server!r}: {exc}; left out")
        register_unavailable(registry, self.failures)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        stack, self._stack = self._stack, None
        if stack is None:
            return None
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:  # every server's grace period at once
                for client in self.clients.values():
                    tg.start_soon(client.aclose)
        for tool in self.tools:
            tool.client = None
        self.clients.clear()
        return await stack.__aexit__(exc_type, exc, tb)


def start_mcp_tools(config: Config, registry: ToolRegistry, **options: Any) -> McpServers:
    """``async with start_mcp_tools(config, registry):`` — the config's servers, running,
    their tools in ``registry``, for as long as the block lasts."""
    return McpServers.from_config(config, registry, **options)


async def list_mcp_tools_async(config: Config, **options: Any) -> McpListing:
    """Start the config's servers, list their tools, stop them: detached tools
    (validated and decided on, never run), and the warnings about tools left out."""
    if not config.mcp_servers:
        return McpListing([], [])
    async with McpServers.from_config(config, **options) as servers:
        return McpListing(
            [tool.detached() for tool in servers.tools],
            list(servers.warnings),
            dict(servers.failures),
        )


def list_mcp_tools(config: Config, **options: Any) -> McpListing:
    """:func:`list_mcp_tools_async` in an event loop of its own (call it outside one)."""
    if not config.mcp_servers:
        return McpListing([], [])
    result: McpListing = anyio.run(lambda: list_mcp_tools_async(config, **options))
    return result


def register_mcp_tools(config: Config, registry: ToolRegistry, **options: Any) -> list[str]:
    """For ``validate``, ``check`` and ``tools``: list the servers' tools (start, list,
    stop) and register them, detached, into ``registry`` with source ``mcp:<server>``.

    Returns warnings (tools left out, servers that could not be started: their calls
    are decided like any, and fail with why). Call it outside an event loop.
    """
    listing = list_mcp_tools(config, **options)
    warnings = list(listing.warnings)
    for tool in listing.tools:
        try:
            registry.register(tool, source=f"mcp:{tool.server}")
        except ValueError as exc:
            warnings.append(f"MCP server {tool.server!r}: {exc}; left out")
    register_unavailable(registry, listing.failures)
    warnings.extend(listing.failures.values())
    return warnings


def register_unavailable(registry: ToolRegistry, failures: Mapping[str, str]) -> None:
    """Every ``mcp__<server>__*`` of a server that could not be started, as a tool that
    fails with why (``failures``: name → message)."""
    for server, reason in failures.items():
        prefix, factory = unavailable_family(server, reason)
        registry.register_family(prefix, factory, source=f"mcp:{server}")
