"""Real servers built with the official ``mcp`` SDK, over stdio, streamable HTTP and SSE
(on 127.0.0.1): listing, readOnlyHint concurrency, a tool error, a server that dies
mid-call, and a timeout. The exec tests then look at the disk and the process table."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.errors import ToolError
from toolrun.tools import ToolContext
from toolrun.tools.mcp import McpServers

from .conftest import alive, wait_dead

SERVER = Path(__file__).with_name("sdk_server.py")


class SdkServer:
    """How to reach one SDK server, and what it logged (``pid N``, tool events)."""

    def __init__(self, transport: str, log: Path) -> None:
        self.transport = transport
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.config: dict[str, Any] = {}

    def events(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def pids(self) -> list[int]:
        return [int(e.split()[1]) for e in self.events() if e.startswith("pid ")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(400):
        if process.poll() is not None:
            raise AssertionError(f"the HTTP server exited with {process.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.025)
    raise AssertionError("the HTTP server never listened")


@pytest.fixture(params=["stdio", "http", "sse"])
def sdk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SdkServer]:
    server = SdkServer(request.param, tmp_path / "sdk-server.log")
    base = [sys.executable, str(SERVER), "--log", str(server.log)]
    if server.transport == "stdio":
        server.config = {"command": base[0], "args": base[1:]}
        yield server
        return
    port = _free_port()
    flag, path = ("--sse", "sse") if server.transport == "sse" else ("--http", "mcp")
    server.process = subprocess.Popen([*base, flag, str(port)], stderr=subprocess.DEVNULL)
    try:
        _wait_listening(port, server.process)
        server.config = {"type": server.transport, "url": f"http://127.0.0.1:{port}/{path}"}
        yield server
    finally:
        server.process.kill()
        server.process.wait()


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    return ws


@pytest.mark.anyio
async def test_tools_are_listed_with_their_annotations(sdk: SdkServer, workspace: Path) -> None:
    async with McpServers({"s": sdk.config}, workspace) as mcp:
        tools = {t.name: t for t in mcp.tools}
    assert set(tools) == {"mcp__s__look", "mcp__s__fail", "mcp__s__crash", "mcp__s__nap"}
    assert tools["mcp__s__look"].annotations.read_only
    assert not tools["mcp__s__fail"].annotations.read_only
    assert tools["mcp__s__look"].input_model.model_validate({"text": "x"}).arguments() == {
        "text": "x"
    }


@pytest.mark.anyio
async def test_a_server_that_dies_mid_call(sdk: SdkServer, workspace: Path) -> None:
    ctx = ToolContext.for_workspace(workspace)
    async with McpServers({"s": sdk.config}, workspace) as mcp:
        tools = {t.name: t for t in mcp.tools}
        crash = tools["mcp__s__crash"]
        with anyio.fail_after(30), pytest.raises(ToolError) as info:
            await crash.run(crash.input_model.model_validate({}), ctx)
        assert str(info.value).startswith("MCP server 's' ")
        if sdk.transport == "stdio":  # its stderr is toolrun's to quote
            assert "Traceback: the SDK server fell over" in str(info.value)
        look = tools["mcp__s__look"]
        with anyio.fail_after(30), pytest.raises(ToolError, match="MCP server 's' "):
            await look.run(look.input_model.model_validate({"text": "after"}), ctx)
    assert "crashing" in sdk.events()
    assert wait_dead(sdk.pids(), 10) == []


def exec_plan(workspace: Path, sdk: SdkServer, calls: list[dict[str, Any]]) -> tuple[int, list[Any]]:
    (workspace / "toolrun.yaml").write_text(
        yaml.safe_dump({"permissions": {"allow": ["mcp__s"]}, "mcpServers": {"s": sdk.config}})
    )
    (workspace / "plan.json").write_text(json.dumps({"calls": calls}))
    result = CliRunner().invoke(main, ["exec", "plan.json", "--format", "jsonl"])
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


def test_read_only_calls_overlap_and_a_tool_error_is_a_result(
    sdk: SdkServer, workspace: Path
) -> None:
    # each `look` returns only once both run at once: they finish only if run concurrently
    code, results = exec_plan(workspace, sdk, [
        {"tool": "mcp__s__look", "input": {"text": "one", "barrier": 2}, "timeout": 30},
        {"tool": "mcp__s__look", "input": {"text": "two", "barrier": 2}, "timeout": 30},
        {"tool": "mcp__s__fail", "input": {"why": "testing"}},
    ])
    assert [(r["status"], r["output"]) for r in results[:2]] == [("ok", "one"), ("ok", "two")]
    # an isError result (the SDK server words it) is a failed call, not a crash of toolrun
    assert (results[2]["status"], results[2]["output"]) == ("error", "Error executing tool fail")
    assert code == 1
    if sdk.transport == "stdio":  # exec started it, and stopped it
        assert wait_dead(sdk.pids(), 10) == []


def test_a_call_that_times_out_is_cancelled_and_the_server_goes_on(
    sdk: SdkServer, workspace: Path
) -> None:
    code, results = exec_plan(workspace, sdk, [
        {"tool": "mcp__s__nap", "input": {"seconds": 60}, "timeout": 0.5},
        {"tool": "mcp__s__look", "input": {"text": "awake"}},
    ])
    assert [r["status"] for r in results] == ["timeout", "ok"]
    assert results[1]["output"] == "awake" and "nap started" in sdk.events()
    assert code == 1
    pids = sdk.pids()
    if sdk.transport == "stdio":
        assert wait_dead(pids, 10) == []
    else:  # an HTTP server is not toolrun's to stop
        assert all(alive(pid) for pid in pids)


def test_type_and_headers_from_the_config_file_reach_the_server(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`.mcp.json`'s `headers` (with ${VAR} expanded) go on the wire from a config file."""
    import http.server
    import threading

    seen: list[dict[str, str]] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(dict(self.headers))
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("TOOLRUN_TEST_TOKEN", "t0k")
        server = SdkServer("http", workspace / "unused.log")
        server.config = {
            "type": "http",
            "url": f"http://127.0.0.1:{httpd.server_address[1]}/mcp",
            "headers": {"Authorization": "Bearer ${TOOLRUN_TEST_TOKEN}", "X-Team": "${TEAM:-core}"},
        }
        code, _ = exec_plan(workspace, server, [{"tool": "mcp__s__look", "input": {"text": "x"}}])
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert code != 0  # the server refused: the call cannot have run
    assert seen and seen[0]["Authorization"] == "Bearer t0k" and seen[0]["X-Team"] == "core"
