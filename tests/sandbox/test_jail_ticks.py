"""A call the read-only jail holds has no effects for a failed output to stop: it launches
without the results before it shown first (a call that may have effects waits for them)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.conftest import needs_bwrap, write


@needs_bwrap
@pytest.mark.parametrize(("command", "shown_first"), [("cat b.txt", False), ("touch c.txt", True)])
def test_only_a_call_that_may_have_effects_waits_for_the_results_before_it(
    ws: Path, monkeypatch: pytest.MonkeyPatch, command: str, shown_first: bool
) -> None:
    from toolrun.commands.exec import ExecRequest, execute
    from toolrun.execution.results import Result
    from toolrun.reaper import run

    write(ws / "a.txt", "a\n")
    write(ws / "b.txt", "b\n")
    write(ws / "toolrun.yaml", "permissions:\n  allow: ['Bash(touch c.txt)']\n")
    calls = [{"tool": "Read", "input": {"file_path": "a.txt"}},
             {"tool": "Bash", "input": {"command": command}}]  # fmt: skip
    plan = write(ws.parent / "plan.json", json.dumps({"calls": calls}))
    launched: list[Any] = []
    real_launch = run.launch

    def launch(*args: Any, **kwargs: Any) -> Any:
        launched.append(args[0])
        return real_launch(*args, **kwargs)

    monkeypatch.setattr(run, "launch", launch)
    before: dict[int, bool] = {}

    def on_result(result: Result) -> None:
        before[result.index] = not launched  # shown before the Bash call launched

    report = execute(ExecRequest(plans=[plan], workspace=ws), on_result=on_result)

    results = [r for plan_results in report.results for r in plan_results]
    assert [r.status for r in results] == ["ok", "ok"]
    assert results[1].runs_in == ("unsandboxed" if shown_first else "read-only jail")
    assert before[0] is shown_first


def _journal_at_launches(
    ws: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> tuple[Any, list[list[str]]]:
    """exec of one Bash call, and the journal's records on the disk as each command of it
    launched."""
    from toolrun.commands.exec import ExecRequest, execute
    from toolrun.reaper import run

    plan = write(ws.parent / "plan.json",
                 json.dumps({"calls": [{"tool": "Bash", "input": {"command": command}}]}))
    on_disk: list[list[str]] = []
    real_launch = run.launch

    def launch(*args: Any, **kwargs: Any) -> Any:
        on_disk.append(_events(ws))
        return real_launch(*args, **kwargs)

    monkeypatch.setattr(run, "launch", launch)
    return execute(ExecRequest(plans=[plan], workspace=ws)), on_disk


def _events(ws: Path) -> list[str]:
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    return [json.loads(line)["event"] for line in journal.read_text().splitlines()]


@needs_bwrap
@pytest.mark.parametrize(("command", "on_disk_first"), [("cat b.txt", False), ("touch c.txt", True)])
def test_only_a_call_that_may_have_effects_is_journalled_as_started_before_it_launches(
    ws: Path, monkeypatch: pytest.MonkeyPatch, command: str, on_disk_first: bool
) -> None:
    """After a crash the journal's "started" records are the calls that may have had
    effects: a call the read-only jail holds can have none, so its record goes in the
    write of the next scheduling tick, once it has launched, rather than cost a write of
    its own before (a crash then may lose it, with nothing lost to know)."""
    write(ws / "b.txt", "b\n")
    write(ws / "toolrun.yaml", "permissions:\n  allow: ['Bash(touch c.txt)']\n")
    report, on_disk = _journal_at_launches(ws, monkeypatch, command)

    (result,) = [r for plan_results in report.results for r in plan_results]
    assert result.status == "ok"
    assert result.runs_in == ("unsandboxed" if on_disk_first else "read-only jail")
    assert on_disk == [["run", "started"] if on_disk_first else ["run"]]
    # either way the whole run is in the journal once it is over, each record in order
    assert _events(ws) == ["run", "started", "result", "end"]


@needs_bwrap
def test_a_call_meant_for_the_jail_that_runs_without_one_is_journalled_first(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bubblewrap that ends at once: the read-only call runs as configured after all,
    with effects possible, so its "started" record is on the disk before it launches."""
    fake = write(ws.parent / "bin" / "bwrap", "#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    write(ws / "b.txt", "b\n")
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    report, on_disk = _journal_at_launches(ws, monkeypatch, "cat b.txt")

    (result,) = [r for plan_results in report.results for r in plan_results]
    assert result.status == "ok" and result.output == "b\n"
    assert result.runs_in == "unsandboxed" and report.enforced is False
    # handed to the jail first (whose side process never started it: no effects), or
    # not, depending on when the probe said no; the launch that ran it had it on disk
    assert on_disk[-1] == ["run", "started"] and len(on_disk) <= 2
