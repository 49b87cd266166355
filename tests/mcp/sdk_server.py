"""An MCP server built with the official ``mcp`` SDK (``MCPServer``), for toolrun's tests.

``python sdk_server.py`` serves over stdio; ``python sdk_server.py --http PORT`` serves
streamable HTTP on 127.0.0.1:PORT/mcp;
``--sse PORT`` serves the older SSE transport on 127.0.0.1:PORT/sse. ``--log FILE`` gets one line per event.

Tools: ``look`` (readOnlyHint; with ``barrier: N`` it returns only once N calls of it
run at the same time, so a test can see calls overlap), ``fail`` (raises: an isError
result), ``crash`` (the server process exits mid-call), ``nap`` (sleeps).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

parser = argparse.ArgumentParser()
parser.add_argument("--http", type=int, default=None)
parser.add_argument("--sse", type=int, default=None)
parser.add_argument("--log", default=None)
options = parser.parse_args()

server = MCPServer("toolrun-sdk-test-server")
_running = 0
_changed = asyncio.Condition()


def log(line: str) -> None:
    if options.log:
        with open(options.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def look(text: str, barrier: int = 0) -> str:
    """Return the text; with barrier, only once that many calls of look overlap."""
    global _running
    async with _changed:
        _running += 1
        _changed.notify_all()
        await _changed.wait_for(lambda: _running >= barrier)
    log(f"look {text}")
    return text


@server.tool()
def fail(why: str = "") -> str:
    """Always fails."""
    raise ValueError(f"it failed: {why}")


@server.tool()
def crash() -> str:
    """The server exits in the middle of the call."""
    log("crashing")
    sys.stderr.write("Traceback: the SDK server fell over\n")
    sys.stderr.flush()
    os._exit(7)


@server.tool()
async def nap(seconds: float) -> str:
    """Sleep, then say so."""
    log("nap started")
    await asyncio.sleep(seconds)
    return "rested"


log(f"pid {os.getpid()}")
if options.sse is not None:
    server.run("sse", host="127.0.0.1", port=options.sse)
elif options.http is not None:
    server.run("streamable-http", host="127.0.0.1", port=options.http)
else:
    server.run("stdio")
