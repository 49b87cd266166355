"""MCP servers from ``mcpServers`` as ``mcp__<server>__<tool>`` tools.

Servers are reached through the official ``mcp`` SDK (``ClientSession``): stdio
(``{command, args, env}``) and streamable HTTP (``{type: http, url, headers}``; ``type:
sse`` for the older transport), in Claude's ``.mcp.json`` shape, ``${VAR}`` and
``${VAR:-default}`` expanded. A tool is a read (concurrency-safe, retry-safe,
read-only) only when the server annotates it ``readOnlyHint: true``; every other
tool is treated as executing something.

How the commands use it
-----------------------
A server process lives in the event loop that started it, so the commands that run
tools start the servers inside the loop that runs the calls::

    from toolrun.tools.mcp import start_mcp_tools

    async def main() -> ...:
        registry = default_registry()
        async with start_mcp_tools(config, registry):   # McpServers.from_config
            plans = load_plans(paths, registry)          # mcp__* names now validate
            ...                                          # run the executor here
        # every server is shut down here, also on cancellation and Ctrl-C

Commands that only need the tool list (``validate``, ``check``, ``tools``) call the
synchronous helper outside any event loop::

    from toolrun.tools.mcp import register_mcp_tools

    registry = default_registry()
    warnings = register_mcp_tools(config, registry)    # start, list, stop

which registers detached tools: validated and decided on like any tool, but running
one raises ToolError. A server that cannot be started fails only the calls that use it:
every ``mcp__<server>__*`` name stands for a tool whose calls fail with why (naming the
server's ``file:line:col`` in the config), and a warning says so.
"""

from __future__ import annotations

from toolrun.tools.mcp.client import McpClient, McpError, ServerSpec
from toolrun.tools.mcp.session import (
    McpListing,
    McpServers,
    McpStartupError,
    list_mcp_tools,
    list_mcp_tools_async,
    register_mcp_tools,
    server_sources,
    start_mcp_tools,
)
from toolrun.tools.mcp.tools import McpInput, McpTool, input_model_from_schema, mcp_tool_name

__all__ = [
    "McpClient",
    "McpError",
    "McpInput",
    "McpListing",
    "McpServers",
    "McpStartupError",
    "McpTool",
    "ServerSpec",
    "input_model_from_schema",
    "list_mcp_tools",
    "list_mcp_tools_async",
    "mcp_tool_name",
    "register_mcp_tools",
    "server_sources",
    "start_mcp_tools",
]
