"""Where a Bash call ran, as results, their text and the run's summary say it (#25).

``where_it_runs`` reads what the run recorded (the jail keeper's ``jail`` record, the
user's sandbox's ``sandbox`` record) over what the decision foresaw; the renderers show it.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolrun.cli.runs import enforced_line
from toolrun.execution.results import CallDecision, DecidedBy, Result, Status, where_it_runs
from toolrun.render.results import summary, text_line, verbose_lines

JUDGED = "allowed on toolrun's judgement (the read-only set)"


def judged(configured: str = "unsandboxed") -> CallDecision:
    return CallDecision("allow", "allowed", DecidedBy("readonly"), jail="read-only",
                        runs_in="read-only jail", runs_in_why=JUDGED,
                        configured=configured)  # fmt: skip


def result(**fields: Any) -> Result:
    base: dict[str, Any] = {
        "index": 0, "id": "c", "execution_id": "exec_1", "run_id": "r", "plan": "plan.yaml",
        "tool": "Bash", "input": {"command": "cat a"}, "decision": "allow",
        "decided_by": DecidedBy("readonly"), "status": Status.SKIPPED,
    }  # fmt: skip
    return Result(**{**base, **fields})


def test_a_call_the_jail_held_ran_in_it() -> None:
    jail = {"kind": "read-only", "enforced": True, "blocked": []}
    assert where_it_runs(judged(), {"jail": jail}) == ("read-only jail", JUDGED)


@pytest.mark.parametrize(
    ("configured", "sandbox", "ran"),
    [
        ("unsandboxed", None, "unsandboxed"),
        ("sandbox", None, "sandbox"),  # a dry run: as the decision foresaw it
        ("sandbox", {"sandboxed": True}, "sandbox"),
        ("sandbox", {"sandboxed": False, "reason": "runs unsandboxed"}, "unsandboxed"),
    ],
)
def test_a_call_meant_for_a_jail_without_one_ran_as_configured(
    configured: str, sandbox: dict[str, Any] | None, ran: str
) -> None:
    metadata: dict[str, Any] = {"jail": {"kind": "read-only", "enforced": False, "reason": "X"}}
    if sandbox is not None:
        metadata["sandbox"] = sandbox
    assert where_it_runs(judged(configured), metadata) == (
        ran, f"{JUDGED}, but no jail can be made here: X",
    )  # fmt: skip


def test_the_sandbox_record_wins_over_what_the_decision_foresaw() -> None:
    ruled = CallDecision("allow", "", DecidedBy("rule"), runs_in="sandbox",
                         runs_in_why="allowed by a rule: runs as configured")  # fmt: skip
    warning = "running unsandboxed: bubblewrap is missing"
    assert where_it_runs(ruled, {"sandbox": {"sandboxed": False, "warning": warning}}) == (
        "unsandboxed", warning,
    )  # fmt: skip
    assert where_it_runs(ruled, {"sandbox": {"sandboxed": True}}) == (
        "sandbox", "allowed by a rule: runs as configured",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "who"),
    [("user", "the user"), ("flag", "--ask allow"), ("hook", "a PermissionRequest hook")],
)
def test_an_approved_call_runs_as_configured(kind: str, who: str) -> None:
    approved = CallDecision("allow", "approved", DecidedBy(kind))
    assert where_it_runs(approved, {}) == ("unsandboxed", f"approved by {who}: runs as configured")
    assert where_it_runs(approved, {"sandbox": {"sandboxed": True}})[0] == "sandbox"


def test_a_denied_call_runs_nowhere() -> None:
    assert where_it_runs(CallDecision("deny", "no", DecidedBy("rule")), {}) == (None, None)


def test_a_dry_run_line_says_where_the_call_would_run() -> None:
    shown = result(runs_in="read-only jail", runs_in_why=JUDGED,
                   metadata={"turn": 1, "run": 1, "run_kind": "concurrent"})  # fmt: skip
    assert text_line(shown) == (
        "skipped        c  Bash(cat a)  exec_1  — turn 1 · run 1 concurrent · read-only jail"
    )
    assert verbose_lines(shown) == [
        "    decided: allow by readonly",
        f"    runs in: read-only jail — {JUDGED}",
    ]
    other = result(tool="Read", input={"file_path": "a"},
                   metadata={"turn": 1, "run": 1, "run_kind": "concurrent"})  # fmt: skip
    assert text_line(other) == "skipped        c  Read(a)  exec_1  — turn 1 · run 1 concurrent"


def test_a_result_record_says_where_it_ran_after_who_decided() -> None:
    record = result(runs_in="sandbox", runs_in_why="w").as_json()
    keys = list(record)
    assert keys[keys.index("decided_by") + 1 : keys.index("status")] == ["runs_in", "runs_in_why"]
    assert (record["runs_in"], record["runs_in_why"]) == ("sandbox", "w")
    read = result(tool="Read", input={"file_path": "a"}).as_json()
    assert (read["runs_in"], read["runs_in_why"]) == (None, None)


@pytest.mark.parametrize(
    ("enforcement", "line"),
    [
        ((True, None), "enforced: true — the calls allowed on toolrun's judgement ran in jails"),
        ((False, "no bwrap"),
         "enforced: false — the calls allowed on toolrun's judgement ran unjailed: no bwrap"),
        ((None, None), ""),
    ],
)  # fmt: skip
def test_the_run_says_what_it_enforced(enforcement: tuple[bool | None, str | None], line: str) -> None:
    out = summary([result()], 1.0, enforcement)
    assert (out["enforced"], out["enforced_reason"]) == enforcement
    assert list(out)[-3:] == ["enforced", "enforced_reason", "wall_ms"]
    end = {"event": "end", "enforced": enforcement[0], "enforced_reason": enforcement[1]}
    assert enforced_line(end) == line
    assert enforced_line({}) == ""  # a run that did not finish claims nothing
