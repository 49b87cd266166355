"""Reads that complete at once skip the coroutine path (``run_now``); everything a result
says, and the order, capacity, journal, rules and hooks around it, stay as they were."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.execution.executor import ExecSettings, Executor
from toolrun.execution.journal import Journal
from toolrun.execution.results import Result, Status
from toolrun.tools import ToolRegistry
from toolrun.tools.base import ToolContext, ToolOutput
from toolrun.tools.builtins.read import INLINE_BYTES, ReadInput, ReadTool

from .conftest import SleepTool, Tracker
from .test_executor import TableDecider, make_plan

pytestmark = pytest.mark.anyio


class CountingRead(ReadTool):
    """The real Read, counting which way each call took."""

    name = "CRead"

    def __init__(self) -> None:
        self.awaited: list[str] = []
        self.at_once: list[str] = []

    async def run(self, input: ReadInput, ctx: ToolContext) -> ToolOutput:
        self.awaited.append(input.file_path)
        return await super().run(input, ctx)

    def run_now(self, input: ReadInput, ctx: ToolContext) -> ToolOutput | None:
        done = super().run_now(input, ctx)
        if done is not None:
            self.at_once.append(input.file_path)
        return done


@pytest.fixture
def read_tool() -> CountingRead:
    return CountingRead()


@pytest.fixture
def registry(tracker: Tracker, read_tool: CountingRead) -> ToolRegistry:
    from toolrun.tools import default_registry

    reg = default_registry(plugins=False)
    reg.register(SleepTool(tracker), source="test")
    reg.register(read_tool, source="test")
    return reg


def run_with(
    registry: ToolRegistry, workspace: Path, **settings: Any
) -> tuple[Executor, list[Result]]:
    sink: list[Result] = []
    ex = Executor(
        workspace=workspace,
        registry=registry,
        decider=TableDecider(),
        settings=ExecSettings(**settings),
        run_id="run-test",
        on_result=sink.append,
    )
    return ex, sink


async def test_small_files_are_read_at_once_with_the_output_run_gives(
    registry: ToolRegistry, workspace: Path, read_tool: CountingRead
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    (workspace / "b.txt").write_text("x" * 10 + "\n")
    plan = make_plan(
        registry,
        [[("CRead", {"file_path": "a.txt"}), ("CRead", {"file_path": "b.txt", "offset": 1})]],
    )
    ex, sink = run_with(registry, workspace)
    (results,) = await ex.run([plan])
    assert read_tool.at_once == ["a.txt", "b.txt"] and read_tool.awaited == []
    assert [r.index for r in sink] == [0, 1]
    ctx = ToolContext.for_workspace(workspace)
    awaited = await ReadTool().run(ReadInput(file_path="a.txt"), ctx)
    first = results[0]
    assert first.status is Status.OK
    assert first.output == awaited.output == "     1\tone\n     2\ttwo"
    assert first.metadata == dict(awaited.metadata)
    assert first.attempts == 1 and first.started_at is not None
    assert first.finished_at is not None and first.finished_at >= first.started_at


async def test_large_missing_and_special_files_take_the_awaited_way(
    registry: ToolRegistry, workspace: Path, read_tool: CountingRead
) -> None:
    (workspace / "big.txt").write_text("line\n" * (INLINE_BYTES // 5 + 10))
    os.mkfifo(workspace / "fifo")
    fifo_writer = os.open(workspace / "fifo", os.O_RDWR)  # so the read sees data, then EOF
    os.write(fifo_writer, b"piped\n")
    plan = make_plan(
        registry,
        [[("CRead", {"file_path": "big.txt", "limit": 1}), ("CRead", {"file_path": "gone.txt"})]],
    )
    ex, _ = run_with(registry, workspace)
    (results,) = await ex.run([plan])
    assert read_tool.at_once == [] and read_tool.awaited == ["big.txt", "gone.txt"]
    assert results[0].status is Status.OK and results[0].output == "     1\tline"
    assert results[1].status is Status.ERROR
    assert results[1].error == f"{workspace / 'gone.txt'} does not exist"
    os.close(fifo_writer)
    ctx = ToolContext.for_workspace(workspace)
    assert ReadTool().run_now(ReadInput(file_path="fifo"), ctx) is None


async def test_errors_of_a_read_at_once_are_the_awaited_errors(
    registry: ToolRegistry, workspace: Path, read_tool: CountingRead
) -> None:
    (workspace / "bin.dat").write_bytes(b"\0\1\2")
    (workspace / "short.txt").write_text("one\n")
    plan = make_plan(
        registry,
        [[("CRead", {"file_path": "bin.dat"}), ("CRead", {"file_path": "short.txt", "offset": 5})]],
    )
    ex, _ = run_with(registry, workspace)
    (results,) = await ex.run([plan])
    assert [r.status for r in results] == [Status.ERROR, Status.ERROR]
    binary = f"{workspace / 'bin.dat'} is a binary file; Read shows text files only"
    assert results[0].error == binary
    assert results[1].error == f"offset 5 is beyond the end of {workspace / 'short.txt'} (1 lines)"


async def test_a_read_waits_for_its_slot_when_the_kind_limit_is_taken(
    registry: ToolRegistry, workspace: Path, read_tool: CountingRead, tracker: Tracker
) -> None:
    (workspace / "a.txt").write_text("a\n")
    plan = make_plan(
        registry, [[("Sleep", {"seconds": 0.2, "tag": "hold"}), ("CRead", {"file_path": "a.txt"})]]
    )
    ex, _ = run_with(registry, workspace, kind_limits={"read": 1})
    (results,) = await ex.run([plan])
    assert read_tool.awaited == ["a.txt"]  # no slot free at once: it queued the usual way
    started, held_until = results[1].started_at, results[0].finished_at
    assert started is not None and held_until is not None and started >= held_until


async def test_an_interrupted_run_reads_nothing(
    registry: ToolRegistry, workspace: Path, read_tool: CountingRead
) -> None:
    (workspace / "a.txt").write_text("a\n")
    plan = make_plan(registry, [[("CRead", {"file_path": "a.txt"})]])
    ex, _ = run_with(registry, workspace)
    ex.interrupt()
    (results,) = await ex.run([plan])
    assert results[0].status is Status.INTERRUPTED and results[0].aborted_before_launch
    assert read_tool.at_once == [] and read_tool.awaited == []


async def test_reads_at_once_are_journalled_started_then_result(
    registry: ToolRegistry, workspace: Path, read_tool: CountingRead
) -> None:
    for name in "abc":
        (workspace / f"{name}.txt").write_text(name + "\n")
    plan = make_plan(registry, [[("CRead", {"file_path": f"{n}.txt"}) for n in "abc"]])
    ex, sink = run_with(registry, workspace)
    ex.journal = Journal(workspace / "j.jsonl")
    await ex.run([plan])
    ex.journal.close()
    records = [json.loads(line) for line in (workspace / "j.jsonl").read_text().splitlines()]
    assert read_tool.at_once == ["a.txt", "b.txt", "c.txt"]
    assert [(r["event"], r["index"]) for r in records] == [
        ("started", 0), ("result", 0), ("started", 1), ("result", 1), ("started", 2), ("result", 2)
    ]
    for started, result in zip(records[::2], records[1::2], strict=True):
        assert started["execution_id"] == result["execution_id"]
        assert started["started_at"] == result["started_at"]
        assert started["input"] == result["input"]
    assert [r.json_line() for r in sink] == [
        json.dumps({k: v for k, v in r.items() if k != "event"}, ensure_ascii=False)
        for r in records[1::2]
    ]


# -- the whole command, on real files -----------------------------------------------------


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_exec_reads_keep_deny_rules_order_and_the_journal(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text("permissions:\n  deny: ['Read(secret.txt)']\n")
    (ws / "secret.txt").write_text("s3cret\n")
    for i in range(30):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    calls = [{"tool": "Read", "input": {"file_path": f"f{i}.txt"}} for i in range(30)]
    calls.insert(7, {"tool": "Read", "input": {"file_path": "secret.txt"}})
    (ws / "plan.json").write_text(json.dumps({"calls": calls}))
    result = CliRunner().invoke(main, ["exec", "plan.json", "--format", "jsonl"])
    assert result.exit_code == 4, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["index"] for r in lines] == list(range(31))
    assert lines[7]["status"] == "denied" and "s3cret" not in lines[7]["output"]
    assert all(r["status"] == "ok" for i, r in enumerate(lines) if i != 7)
    assert lines[8]["output"] == "     1\tfile 7"
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    started = [r["index"] for r in records if r["event"] == "started"]
    assert started == [i for i in range(31) if i != 7]  # the denied read never started
    journalled = [r for r in records if r["event"] == "result"]
    assert [{k: v for k, v in r.items() if k != "event"} for r in journalled] == lines


def test_a_post_tool_use_hook_still_sees_every_read(ws: Path) -> None:
    log = ws / "seen.log"
    hook = ws / "hook.py"
    hook.write_text(
        "import json, sys\nevent = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(event['tool_input']['file_path'] + '\\n')\n"
    )
    (ws / "toolrun.yaml").write_text(
        "hooks:\n  PostToolUse:\n    - matcher: Read\n"
        f"      hooks: [{{type: command, command: '{sys.executable} {hook}'}}]\n"
    )
    for i in range(3):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    calls = [{"tool": "Read", "input": {"file_path": f"f{i}.txt"}} for i in range(3)]
    (ws / "plan.json").write_text(json.dumps({"calls": calls}))
    result = CliRunner().invoke(main, ["exec", "plan.json", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    # (the paths absolute, as Claude Code sends them)
    assert sorted(log.read_text().split()) == [str(ws / f"f{i}.txt") for i in range(3)]
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(r["hooks"][0]["event"] == "PostToolUse" for r in lines)


async def test_a_long_run_of_reads_at_once_still_lets_the_event_loop_run(
    registry: ToolRegistry, workspace: Path, read_tool: CountingRead
) -> None:
    """Reads that never wait would keep everything else (Ctrl-C handling) from the loop:
    the run hands it control as it goes, not only at the end."""
    (workspace / "a.txt").write_text("a\n")
    n = 3000
    plan = make_plan(registry, [[("CRead", {"file_path": "a.txt"})] * n])
    ex, sink = run_with(registry, workspace, max_calls_per_turn=n)
    seen: list[int] = []
    done = False

    async def watch() -> None:
        while not done:
            seen.append(len(sink))
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        await anyio.lowlevel.checkpoint()
        await ex.run([plan])
        done = True
    assert len(read_tool.at_once) == n
    assert any(0 < count < n for count in seen)  # the watcher ran mid-run
