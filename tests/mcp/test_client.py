"""McpClient against the real test server: handshake, calls, failures, cancellation, shutdown."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolrun.tools.mcp import McpClient, McpError, ServerSpec

from .conftest import Servers, alive, wait_dead

pytestmark = pytest.mark.anyio


def spec(servers: Servers, *flags: str, name: str = "t", **raw: Any) -> ServerSpec:
    return ServerSpec.from_config(name, {**servers.config(*flags), **raw}, source="cfg.yaml:3:3")


async def eventually(condition: Callable[[], bool], seconds: float = 3.0) -> None:
    """Poll ``condition`` (something another process writes) until it holds."""
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await anyio.sleep(0.02)
    raise AssertionError("the condition never held")


def text(result: dict[str, Any]) -> str:
    return "\n".join(c["text"] for c in result["content"] if c["type"] == "text")


async def test_handshake_lists_every_page_and_calls(servers: Servers, workspace: Path) -> None:
    async with McpClient(spec(servers, "--page-size", "3"), workspace) as client:
        await client.initialize()
        assert client.protocol_version  # the SDK negotiates it
        assert client.server_info["name"] == "toolrun-test-server"
        tools = await client.list_tools()
        assert [t["name"] for t in tools][:3] == ["echo", "add", "write_note"]
        assert len(tools) == 10
        assert text(await client.call_tool("echo", {"text": "hello"})) == "hello"
        assert text(await client.call_tool("add", {"a": 2, "b": 0.5})) == "2.5"
    events = servers.events()
    init = json.loads(events[0].removeprefix("initialize "))
    assert init == {
        "capabilities": {},
        "clientInfo": {"name": "toolrun", "version": init["clientInfo"]["version"]},
        "protocolVersion": init["protocolVersion"],
    }
    assert events[1:6] == [
        "initialized",
        "tools/list 0",
        "tools/list 3",
        "tools/list 6",
        "tools/list 9",
    ]
    assert events[-1] == "stdin closed"  # a clean shutdown: stdin closed first


async def test_the_servers_protocol_version_is_accepted(servers: Servers, workspace: Path) -> None:
    async with McpClient(spec(servers, "--protocol", "2024-11-05"), workspace) as client:
        await client.initialize()
        assert client.protocol_version == "2024-11-05"


async def test_requests_from_the_server_are_answered(servers: Servers, workspace: Path) -> None:
    async with McpClient(spec(servers, "--ping-client"), workspace) as client:
        await client.initialize()
        assert text(await client.call_tool("echo", {"text": "still fine"})) == "still fine"
        await eventually(lambda: len([e for e in servers.events() if e.startswith("resp")]) == 2)
    responses = {
        message["id"]: message
        for e in servers.events()
        if e.startswith("response ")
        for message in [json.loads(e.removeprefix("response "))]
    }
    assert responses["srv-1"] == {"jsonrpc": "2.0", "id": "srv-1", "result": {}}
    assert "error" in responses["srv-2"]  # a request toolrun does not serve is refused


async def test_a_jsonrpc_error_names_the_server(servers: Servers, workspace: Path) -> None:
    async with McpClient(spec(servers), workspace) as client:
        await client.initialize()
        with pytest.raises(McpError) as info:
            await client.call_tool("nope", {})
        assert str(info.value) == (
            "MCP server 't' answered tools/call with an error: Unknown tool: nope "
            "(JSON-RPC error -32602)"
        )
        assert info.value.code == -32602
        # the server is still usable
        assert text(await client.call_tool("echo", {"text": "ok"})) == "ok"


async def test_a_server_that_exits_at_start(servers: Servers, workspace: Path) -> None:
    async with McpClient(spec(servers, "--mode", "exit"), workspace) as client:
        with pytest.raises(McpError) as info:
            await client.initialize()
    message = str(info.value)
    assert message.startswith(
        "MCP server 't' closed the connection (it exited or crashed); its stderr ends with:"
    )
    assert "fatal: the test server refuses to start" in message


async def test_garbage_on_stdout_is_a_protocol_error(servers: Servers, workspace: Path) -> None:
    async with McpClient(spec(servers, "--mode", "garbage"), workspace) as client:
        with pytest.raises(
            McpError,
            match="wrote something that is not JSON-RPC on stdout: 'Hello! I am not JSON-RPC.'",
        ):
            await client.initialize()
        # every later request fails at once, with the same reason
        with pytest.raises(McpError, match="not JSON-RPC"):
            await client.list_tools()


async def test_garbage_during_a_call(servers: Servers, workspace: Path) -> None:
    async with McpClient(spec(servers, "--mode", "garbage-on-call"), workspace) as client:
        await client.initialize()
        with pytest.raises(McpError, match=r"'t' wrote something that is not JSON-RPC.*oops"):
            await client.call_tool("echo", {"text": "x"})


async def test_a_server_that_never_answers_times_out(servers: Servers, workspace: Path) -> None:
    async with McpClient(spec(servers, "--mode", "silent"), workspace) as client:
        with pytest.raises(
            McpError, match=r"^MCP server 't' did not answer initialize within 0.3 s"
        ):
            await client.initialize(time_limit=0.3)


async def test_a_crash_during_a_call_fails_it_and_every_later_one(
    servers: Servers, workspace: Path
) -> None:
    async with McpClient(spec(servers), workspace) as client:
        await client.initialize()
        with pytest.raises(McpError) as info:
            await client.call_tool("crash", {})
        assert str(info.value).startswith("MCP server 't' closed the connection")
        assert "Traceback: the server fell over" in str(info.value)
        with pytest.raises(McpError, match="closed the connection"):
            await client.call_tool("echo", {"text": "x"})
        assert client.failure == "closed the connection (it exited or crashed)"


async def test_a_missing_command_is_a_clear_error(servers: Servers, workspace: Path) -> None:
    missing = ServerSpec.from_config("gone", {"command": "./no-such-server"})
    with pytest.raises(
        McpError,
        match=r"^MCP server 'gone' cannot start './no-such-server': "
        "No such file or directory",
    ):
        async with McpClient(missing, workspace):
            pass


async def test_a_cancelled_call_is_announced_and_the_server_survives(
    servers: Servers, workspace: Path
) -> None:
    async with McpClient(spec(servers), workspace) as client:
        await client.initialize()
        with anyio.move_on_after(0.3) as scope:
            await client.call_tool("slow", {"seconds": 30})
        assert scope.cancelled_caught
        assert text(await client.call_tool("echo", {"text": "alive"})) == "alive"
        await eventually(lambda: "slow 2 stopped" in servers.events())  # 1 was initialize
    assert any(e.startswith("cancelled 2 ") for e in servers.events())  # the SDK told it


async def test_shutdown_kills_the_process_group(servers: Servers, workspace: Path) -> None:
    """A server that ignores stdin EOF and SIGTERM, with a grandchild: all are gone."""
    stubborn = spec(servers, "--ignore-eof", "--spawn-child")
    async with McpClient(stubborn, workspace, shutdown_grace=0.2) as client:
        await client.initialize()
        server_pid, child_pid = servers.pids()
        assert alive(server_pid) and alive(child_pid)
    # once the client has closed, the server and its grandchild are gone (how fast the
    # shutdown is belongs to a benchmark, not to this test)
    assert wait_dead([server_pid, child_pid], 10) == []


async def test_shutdown_completes_when_the_caller_is_cancelled(
    servers: Servers, workspace: Path
) -> None:
    with anyio.move_on_after(0.5):
        async with McpClient(spec(servers, "--ignore-eof"), workspace, shutdown_grace=0.2) as c:
            await c.initialize()
            await c.call_tool("slow", {"seconds": 30})
    assert wait_dead(servers.pids(), 2) == []


async def test_server_env_and_cwd(servers: Servers, workspace: Path) -> None:
    raw = servers.config(env={"GREETING": "hi ${WHO}", "EMPTY": "${NOPE:-fallback}"})
    configured = ServerSpec.from_config("t", raw, environ={"WHO": "there"})
    async with McpClient(configured, workspace) as client:
        await client.initialize()
        assert text(await client.call_tool("getenv", {"name": "GREETING"})) == "hi there"
        assert text(await client.call_tool("getenv", {"name": "EMPTY"})) == "fallback"
        assert text(await client.call_tool("getenv", {"name": "PATH"})) != "<unset>"
        await client.call_tool("write_note", {"path": "note.txt", "text": "in the workspace"})
    assert (workspace / "note.txt").read_text() == "in the workspace"


def test_server_specs_are_checked() -> None:
    with pytest.raises(ValueError, match=r"uses \$\{TOKEN\}, which is not set"):
        ServerSpec.from_config("s", {"command": "x", "args": ["--token", "${TOKEN}"]}, environ={})
    http = ServerSpec.from_config(
        "s",
        {"type": "http", "url": "${BASE}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        environ={"BASE": "https://example.com", "TOKEN": "t0k"},
    )
    assert (http.transport, http.url) == ("http", "https://example.com/mcp")
    assert dict(http.headers) == {"Authorization": "Bearer t0k"}
    assert ServerSpec.from_config("s", {"url": "https://example.com/mcp"}).transport == "http"
    with pytest.raises(ValueError, match=r"uses \$\{TOKEN\}, which is not set"):
        ServerSpec.from_config("s", {"type": "http", "url": "u", "headers": {"A": "${TOKEN}"}},
                               environ={})
    with pytest.raises(ValueError, match="without a url"):
        ServerSpec.from_config("s", {"type": "http"})
    with pytest.raises(ValueError, match="unknown type 'ws'"):
        ServerSpec.from_config("s", {"type": "ws", "command": "x"})
    with pytest.raises(ValueError, match="has no command"):
        ServerSpec.from_config("s", {"args": ["x"]})
    with pytest.raises(TypeError, match="args must be a list"):
        ServerSpec.from_config("s", {"command": "x", "args": "--flag"})
