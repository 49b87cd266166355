"""McpServers: start, register, run through the executor, fail clearly, shut down."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from toolrun.config import load_config
from toolrun.errors import PlanError, ToolError
from toolrun.execution.decide import EngineDecider
from toolrun.execution.executor import ExecSettings, Executor
from toolrun.execution.partition import partition
from toolrun.execution.results import Status
from toolrun.permissions import PermissionEngine
from toolrun.plan import load_plan
from toolrun.tools import ToolContext, ToolKind, ToolRegistry, default_registry
from toolrun.tools.mcp import (
    McpServers,
    McpTool,
    list_mcp_tools,
    register_mcp_tools,
    start_mcp_tools,
)
from toolrun.tools.mcp.tools import UnavailableTool

from .conftest import Servers, wait_dead


def ctx(workspace: Path) -> ToolContext:
    return ToolContext.for_workspace(workspace)


def write_config(workspace: Path, servers: dict[str, Any], **extra: Any) -> Path:
    path = workspace / "toolrun.yaml"
    path.write_text(yaml.safe_dump({**extra, "mcpServers": servers}, sort_keys=False))
    return path


async def call(tool: McpTool, workspace: Path, **arguments: Any) -> Any:
    return await tool.run(tool.input_model.model_validate(arguments), ctx(workspace))


@pytest.mark.anyio
async def test_tools_are_registered_with_names_kinds_and_sources(
    servers: Servers, workspace: Path
) -> None:
    registry = default_registry(plugins=False)
    builtins = set(registry.names())
    config = {"t": servers.config("--page-size", "4"), "other": servers.config()}
    async with McpServers(config, workspace, registry=registry) as mcp:
        added = sorted(set(registry.names()) - builtins)
        expected = sorted(
            f"mcp__{s}__{t}"
            for s in ("t", "other")
            for t in (
                "echo",
                "add",
                "write_note",
                "fail",
                "slow",
                "crash",
                "picture",
                "stats",
                "getenv",
                "list_things",
            )
        )
        assert added == expected
        assert registry.source_of("mcp__t__echo") == "mcp:t"
        assert registry.source_of("mcp__other__add") == "mcp:other"
        echo, add, things = (
            registry.get(n) for n in ("mcp__t__echo", "mcp__t__add", "mcp__t__list_things")
        )
        assert isinstance(echo, McpTool) and isinstance(add, McpTool)
        assert isinstance(things, McpTool) and things.tool_name == "list.things"
        assert (echo.kind, echo.is_retry_safe) == (ToolKind.READ, True)
        assert (add.kind, add.is_retry_safe) == (ToolKind.EXECUTE, False)
        params = echo.input_model.model_validate({"text": "x"})
        assert echo.is_concurrency_safe(params, ctx(workspace))
        assert not add.is_concurrency_safe(add.input_model.model_validate({"a": 1, "b": 2}))
        assert echo.description == "Echo the text back."
        assert set(mcp.clients) == {"t", "other"} and mcp.warnings == []
        assert (await call(things, workspace)).output == "a, b, c"
    # after the block: shut down, the tools stay registered but cannot run
    assert wait_dead(servers.pids(), 2) == []
    with pytest.raises(ToolError, match="MCP server 't' is not running"):
        await call(echo, workspace, text="x")


@pytest.mark.anyio
async def test_calls_and_their_results(servers: Servers, workspace: Path) -> None:
    async with McpServers({"t": servers.config()}, workspace) as mcp:
        tools = {tool.tool_name: tool for tool in mcp.tools}
        out = await call(tools["echo"], workspace, text="hello", extra="allowed")
        assert (out.output, out.is_error, dict(out.metadata)) == ("hello", False, {})
        assert (await call(tools["add"], workspace, a=2, b=3)).output == "5"
        written = await call(
            tools["write_note"],
            workspace,
            path="n.txt",
            text="note",
            tags=["a"],
            meta=None,
            count=2,
            final=True,
        )
        assert written.output == "wrote 4 characters"
        assert (workspace / "n.txt").read_text() == "note"
        failed = await call(tools["fail"], workspace, why="testing")
        assert (failed.output, failed.is_error) == ("it failed: testing", True)
        picture = await call(tools["picture"], workspace)
        assert picture.output == "a pixel:\n[image/png, 70 bytes]\n[resource file:///tmp/x.txt]"
        stats = await call(tools["stats"], workspace)
        assert dict(stats.metadata) == {"structuredContent": {"files": 3, "ok": True}}
        with pytest.raises(ToolError, match=r"^MCP server 't' closed the connection"):
            await call(tools["crash"], workspace)
    assert 'call echo {"extra": "allowed", "text": "hello"}' in servers.events()


@pytest.mark.anyio
async def test_two_read_only_calls_run_at_the_same_time(servers: Servers, workspace: Path) -> None:
    """The server holds each call until two are in flight (a barrier, no timing)."""
    async with McpServers({"t": servers.config()}, workspace) as mcp:
        echo = next(t for t in mcp.tools if t.tool_name == "echo")
        outputs: list[str] = []

        async def one(text: str) -> None:
            outputs.append((await call(echo, workspace, text=text, barrier=2)).output)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(one, "a")
                tg.start_soon(one, "b")
    assert sorted(outputs) == ["a", "b"]


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class AnyLine(str):
    """Equal to any line that starts with it (the rest is the HTTP library's wording)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and other.startswith(str(self))

    __hash__ = str.__hash__


@pytest.mark.anyio
async def test_startup_failures_name_the_server_and_its_config_source(
    servers: Servers, workspace: Path
) -> None:
    write_config(
        workspace,
        {
            "good": servers.config(),
            "broken": servers.config("--mode", "exit"),
            "web": {"type": "http", "url": f"http://127.0.0.1:{closed_port()}/mcp"},
            "chatty": servers.config("--mode", "garbage"),
        },
    )
    config = load_config(workspace=workspace)
    registry = default_registry(plugins=False)
    async with start_mcp_tools(config, registry) as running:  # the good one starts
        assert registry.source_of("mcp__good__echo") == "mcp:good"
        failures = running.failures
        stand_in = registry.get("mcp__broken__anything")
        assert isinstance(stand_in, UnavailableTool)
        with pytest.raises(ToolError) as info:  # a call of it fails with why
            await stand_in.run(stand_in.input_model(x=1), None)  # type: ignore[arg-type]
    assert str(info.value) == failures["broken"]
    text = (workspace / "toolrun.yaml").read_text().splitlines()
    where = {
        name: f"{workspace / 'toolrun.yaml'}:{text.index(f'  {name}:') + 1}:3"
        for name in ("broken", "web", "chatty")
    }
    stderr_line = failures["chatty"].splitlines()[-1].removeprefix("  server: initialize ")
    assert json.loads(stderr_line)["clientInfo"]["name"] == "toolrun"
    assert [line for name in ("broken", "web", "chatty") for line in failures[name].splitlines()] == [
        (
            f"{where['broken']}: MCP server 'broken' could not be started: closed the connection "
            "(it exited or crashed); its stderr ends with:"
        ),
        "  fatal: the test server refuses to start",
        AnyLine(f"{where['web']}: MCP server 'web' could not be started: "),
        (
            f"{where['chatty']}: MCP server 'chatty' could not be started: wrote something "
            "that is not JSON-RPC on stdout: 'Hello! I am not JSON-RPC.'; its stderr ends with:"
        ),
        "  server: initialize " + stderr_line,
    ]
    assert "good" not in failures
    assert registry.get("mcp__good__nothing") is None  # a server that runs has its own tools
    assert wait_dead(servers.pids(), 2) == []


@pytest.mark.anyio
async def test_a_missing_variable_is_a_startup_error(workspace: Path) -> None:
    async with McpServers({"s": {"command": "${NOT_SET_ANYWHERE}"}}, workspace) as running:
        assert re.search(r"MCP server 's' uses \$\{NOT_SET_ANYWHERE\}", running.failures["s"])


@pytest.mark.anyio
async def test_a_server_that_hangs_at_startup_is_cut_off(servers: Servers, workspace: Path) -> None:
    async with McpServers(
        {"slowpoke": servers.config("--mode", "silent")}, workspace, startup_timeout=0.3
    ) as running:
        assert "'slowpoke' could not be started: did not answer initialize within 0.3 s" in (
            running.failures["slowpoke"]
        )


@pytest.mark.anyio
async def test_cancelling_the_startup_leaves_nothing_running(
    servers: Servers, workspace: Path
) -> None:
    config = {"a": servers.config("--mode", "silent"), "b": servers.config("--ignore-eof")}
    with anyio.move_on_after(0.5) as scope:
        async with McpServers(config, workspace, shutdown_grace=0.1):
            pytest.fail("a never answers")
    assert scope.cancelled_caught
    assert len(servers.pids()) == 2 and wait_dead(servers.pids(), 2) == []


@pytest.mark.anyio
async def test_an_error_in_the_block_propagates_as_it_is(servers: Servers, workspace: Path) -> None:
    with pytest.raises(KeyError, match="raised in the block"):
        async with McpServers({"t": servers.config()}, workspace):
            raise KeyError("raised in the block")


@pytest.mark.anyio
async def test_duplicate_names_are_left_out_with_a_warning(
    servers: Servers, workspace: Path
) -> None:
    registry = ToolRegistry()
    registry.register(McpTool("t", {"name": "echo"}), source="plugin:x")
    async with McpServers({"t": servers.config()}, workspace, registry=registry) as mcp:
        assert registry.source_of("mcp__t__echo") == "plugin:x"
        assert registry.source_of("mcp__t__add") == "mcp:t"
        assert mcp.warnings == [
            "MCP server 't': tool 'mcp__t__echo' is already registered by plugin:x; left out"
        ]


@pytest.mark.anyio
async def test_odd_tools_are_handled(servers: Servers, workspace: Path) -> None:
    async with McpServers({"t": servers.config("--odd-tools")}, workspace) as mcp:
        tools = {t.name: t for t in mcp.tools}
        assert tools["mcp__t__list_things"].tool_name == "list.things"  # the first one wins
        assert mcp.warnings == [
            (
                "MCP server 't': tool 'list_things' is left out, "
                "its name mcp__t__list_things is taken by 'list.things'"
            )
        ]
        odd = tools["mcp__t__odd"]  # a schema that is not one: any input goes to the server
        assert odd.input_model.model_validate({"x": 1}).arguments() == {"x": 1}


def test_validate_and_check_get_detached_tools(servers: Servers, workspace: Path) -> None:
    write_config(workspace, {"t": servers.config()})
    config = load_config(workspace=workspace)
    tools, warnings, failures = list_mcp_tools(config)
    assert {t.name for t in tools} >= {"mcp__t__echo", "mcp__t__write_note"}
    assert all(t.client is None for t in tools) and warnings == [] and failures == {}
    assert wait_dead(servers.pids(), 2) == []
    registry = default_registry(plugins=False)
    assert register_mcp_tools(config, registry) == []
    assert registry.source_of("mcp__t__slow") == "mcp:t"
    plan = workspace / "plan.yaml"
    plan.write_text("calls:\n  - {tool: mcp__t__add, input: {a: 1, b: two}}\n")
    with pytest.raises(PlanError, match="calls\\[0\\].input.b: expected number, got string"):
        load_plan(plan, registry)
    assert list_mcp_tools(load_config(workspace=workspace / "..")) == ([], [], {})


@pytest.mark.anyio
async def test_a_plan_runs_through_the_executor(servers: Servers, workspace: Path) -> None:
    """As `exec` will: config → servers → plan → partition → decisions → results."""
    write_config(
        workspace,
        {"t": servers.config()},
        permissions={"allow": ["mcp__t"], "deny": ["mcp__t__fail"]},
    )
    (workspace / "plan.yaml").write_text(
        "calls:\n"
        "  - {tool: mcp__t__echo, input: {text: one, barrier: 2}}\n"
        "  - {tool: mcp__t__echo, input: {text: two, barrier: 2}}\n"
        "  - {tool: mcp__t__write_note, input: {path: out.txt, text: hi}}\n"
        "  - {tool: mcp__t__fail, input: {}}\n"
        "  - {tool: mcp__t__slow, input: {seconds: 30}, timeout: 0.3}\n"
        "  - {tool: mcp__t__add, input: {a: 1, b: 2}}\n"
    )
    config = load_config(workspace=workspace)
    registry = default_registry(plugins=False)
    async with start_mcp_tools(config, registry):
        plan = load_plan(workspace / "plan.yaml", registry)
        tools = {t: registry.get(t) for t in registry.names()}
        runs = partition(
            list(plan.turns[0].calls),
            lambda c: bool((tool := tools[c.tool]) and tool.is_concurrency_safe(c.params)),
        )
        assert [len(r.calls) for r in runs] == [2, 1, 1, 1, 1]
        executor = Executor(
            workspace=config.workspace,
            registry=registry,
            decider=EngineDecider(PermissionEngine(config, registry)),
            settings=ExecSettings(),
            run_id="run-mcp",
        )
        with anyio.fail_after(10):
            (results,) = await executor.run([plan])
    by_status = [(r.tool, r.status, r.output) for r in results]
    assert by_status == [
        ("mcp__t__echo", Status.OK, "one"),
        ("mcp__t__echo", Status.OK, "two"),
        ("mcp__t__write_note", Status.OK, "wrote 2 characters"),
        ("mcp__t__fail", Status.DENIED, ""),
        ("mcp__t__slow", Status.TIMEOUT, results[4].output),
        ("mcp__t__add", Status.OK, "3"),  # the server survived the timed-out call
    ]
    assert (workspace / "out.txt").read_text() == "hi"
    # the timed-out call was cancelled at the server (before `add` was even sent)
    events = servers.events()
    cancelled = [i for i, e in enumerate(events) if e.startswith("cancelled ")]
    assert len(cancelled) == 1
    assert cancelled[0] < events.index('call add {"a": 1, "b": 2}')


CTRL_C_SCRIPT = """
import json, sys
import anyio
from toolrun.tools.mcp import McpServers

async def main() -> None:
    async with McpServers(json.loads(sys.argv[1]), sys.argv[2], shutdown_grace=0.2):
        print("ready", flush=True)
        await anyio.sleep(30)

anyio.run(main)
"""


def test_ctrl_c_shuts_every_server_down(servers: Servers, workspace: Path, tmp_path: Path) -> None:
    """Stubborn servers (ignore stdin EOF and SIGTERM, leave a grandchild) and a Ctrl-C."""
    script = tmp_path / "run.py"
    script.write_text(CTRL_C_SCRIPT)
    config = {
        "a": servers.config("--ignore-eof", "--spawn-child"),
        "b": servers.config("--ignore-eof"),
    }
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    with subprocess.Popen(
        [sys.executable, str(script), json.dumps(config), str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        assert len(servers.pids()) == 3
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert wait_dead(servers.pids(), 2) == []
