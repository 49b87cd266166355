"""A call the read-only jail holds has no effects for a failed output to stop: it launches
without the results before it shown first (a call that may have effects waits for them)."""

from __future__ import annotations

import json
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
