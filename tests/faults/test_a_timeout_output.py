"""#27 item 3: a call cut short by a plan-level ``timeout:`` keeps what it printed, in its
result's ``output`` and in ``show --full`` (as the README says a timed-out call does)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.faults.support_a import journal, results, toolrun

SLOW = "echo before; printf 'still %s\\n' going; sleep 30"
PRINTED = "before\nstill going\n"


def allow(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text("permissions:\n  allow: [Bash]\n")


@pytest.mark.parametrize(
    "call",
    [
        {"id": "t", "tool": "Bash", "input": {"command": SLOW}, "timeout": 3},  # the report
        {"id": "t", "tool": "Bash", "input": {"command": SLOW}, "timeout": 2.5},
        {"id": "t", "tool": "Bash", "input": {"command": SLOW, "timeout": 60_000}, "timeout": 3},
        {"id": "t", "tool": "Bash", "input": {"command": SLOW, "timeout": 3000}},  # its own
    ],
    ids=["plan-timeout", "fractional", "plan-under-input", "input-timeout"],
)
def test_a_timed_out_call_keeps_what_it_printed(tmp_path: Path, call: dict[str, object]) -> None:
    allow(tmp_path)
    (tmp_path / "plan.json").write_text(json.dumps({"calls": [call]}))
    done = toolrun(tmp_path, "exec", "plan.json", "--format", "json")
    (result,) = results(done)
    assert result["status"] == "timeout" and result["output"] == PRINTED
    (record,) = (r for r in journal(tmp_path) if r["event"] == "result")
    assert record["output"] == PRINTED
    full = toolrun(tmp_path, "show", "last", "t", "--full")
    assert full.returncode == 0 and full.stdout == PRINTED


def test_a_timed_out_call_read_from_stdin_keeps_what_it_printed(tmp_path: Path) -> None:
    allow(tmp_path)
    line = json.dumps({"id": "t", "tool": "Bash", "input": {"command": SLOW}, "timeout": 3})
    done = toolrun(tmp_path, "exec", "-", "--format", "jsonl", input=line + "\n")
    (result,) = [json.loads(x) for x in done.stdout.splitlines() if '"status"' in x]
    assert result["status"] == "timeout" and result["output"] == PRINTED


def test_a_timed_out_call_that_printed_much_keeps_all_of_it_stored(tmp_path: Path) -> None:
    allow(tmp_path)
    (tmp_path / "data.bin").write_bytes(bytes(range(256)) * 8192)  # 2 MiB
    call = {"id": "t", "tool": "Bash", "input": {"command": "cat data.bin; sleep 30"}, "timeout": 3}
    (tmp_path / "plan.json").write_text(json.dumps({"calls": [call]}))
    (result,) = results(toolrun(tmp_path, "exec", "plan.json", "--format", "json"))
    assert result["status"] == "timeout" and "omitted; all of it is stored" in result["output"]
    full = toolrun(tmp_path, "show", "last", "t", "--full", text=False)
    assert full.stdout == (tmp_path / "data.bin").read_bytes()
