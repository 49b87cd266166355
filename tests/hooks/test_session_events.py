"""SessionStart before the first call, Stop and SessionEnd after the last (#30), with
Claude Code's fields: SessionStart ``source: startup`` (what its matcher reads),
SessionEnd ``reason: other``, Stop ``stop_hook_active: false``. Real ``toolrun exec``
processes and real hook scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hooks.conftest import PY, journal, toolrun_exec

RECORD = """
import json, sys
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(event) + "\\n")
if len(sys.argv) > 2:
    print(sys.argv[2])
"""


def recorder(ws: Path, *extra: str) -> tuple[str, Path]:
    script, log = ws.parent / "record.py", ws.parent / "events.jsonl"
    script.write_text(RECORD)
    return " ".join([PY, str(script), str(log), *extra]), log


def events(log: Path) -> list[dict[str, object]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def group(command: str, matcher: str | None = None, if_rule: str | None = None) -> str:
    m = f"matcher: {json.dumps(matcher)}, " if matcher is not None else ""
    i = f", if: {json.dumps(if_rule)}" if if_rule else ""
    return f"[{{{m}hooks: [{{type: command, command: {json.dumps(command)}{i}}}]}}]"


def test_session_start_stop_and_end_run_around_the_calls_in_order(ws: Path) -> None:
    command, log = recorder(ws)
    config = (
        "permissions: {allow: [Bash]}\nhooks:\n"
        f"  SessionStart: {group(command, 'startup')}\n"
        f"  Stop: {group(command)}\n"
        f"  SessionEnd: {group(command)}\n"
    )
    call = {"tool": "Bash", "input": {"command": f"echo '{{\"call\": 1}}' >> {log}"}}
    code, results, _err = toolrun_exec(ws, config, [call], "--ask", "allow")
    assert code == 0 and results[0]["status"] == "ok"
    seen = events(log)
    assert [e.get("hook_event_name", "call") for e in seen] == [
        "SessionStart", "call", "Stop", "SessionEnd",
    ]
    start, _call, stop, end = seen
    run_id = results[0]["run_id"]
    assert start["source"] == "startup" and start["session_id"] == run_id
    assert stop["stop_hook_active"] is False and "last_assistant_message" in stop
    assert end["reason"] == "other"
    for e in (start, stop, end):
        assert e["cwd"] == str(ws) and "tool_name" not in e
    names = [r["event"] for r in journal(ws)]
    assert {"SessionStart", "Stop", "SessionEnd"} <= set(names)


@pytest.mark.parametrize(
    ("matcher", "if_rule", "runs"),
    [
        ("startup", None, True),
        ("", None, True),
        ("startup|resume", None, True),
        ("resume", None, False),
        ("clear", None, False),
        ("startup", "Bash(*)", False),  # `if` is for tool events: never runs on SessionStart
    ],
)
def test_session_start_matches_its_source(
    ws: Path, matcher: str, if_rule: str | None, runs: bool
) -> None:
    command, log = recorder(ws)
    config = f"hooks:\n  SessionStart: {group(command, matcher, if_rule)}\n"
    code, _results, _err = toolrun_exec(ws, config, [{"tool": "Bash", "input": {"command": "true"}}],
                                        "--ask", "allow")
    assert code == 0
    assert [e["hook_event_name"] for e in events(log)] == (["SessionStart"] if runs else [])


def test_session_start_stdout_is_context_in_the_journal(ws: Path) -> None:
    command, _log = recorder(ws, "'branch: feat/x'")
    config = f"hooks:\n  SessionStart: {group(command, 'startup')}\n"
    _code, _results, _err = toolrun_exec(ws, config, [{"tool": "Bash", "input": {"command": "true"}}],
                                        "--ask", "allow")
    (record,) = [r for r in journal(ws) if r["event"] == "SessionStart"]
    assert record["additional_context"] == ["branch: feat/x"]


def test_a_dry_run_runs_no_session_hook(ws: Path) -> None:
    command, log = recorder(ws)
    config = (
        f"hooks:\n  SessionStart: {group(command)}\n  Stop: {group(command)}\n"
        f"  SessionEnd: {group(command)}\n"
    )
    _code, results, _err = toolrun_exec(
        ws, config, [{"tool": "Bash", "input": {"command": "true"}}], "--dry-run"
    )
    assert results[0]["status"] in ("skipped", "denied")
    assert events(log) == []


def test_stop_and_session_end_exit_2_only_say_so(ws: Path) -> None:
    # neither can block in a plan: the run is over; the journal keeps what they said
    config = (
        "permissions: {allow: [Bash]}\nhooks:\n"
        f"  Stop: {group('echo keep going >&2; exit 2')}\n"
        f"  SessionEnd: {group('echo bye >&2; exit 2')}\n"
    )
    code, results, _err = toolrun_exec(ws, config, [{"tool": "Bash", "input": {"command": "true"}}])
    assert code == 0 and results[0]["status"] == "ok"
    records = {r["event"]: r for r in journal(ws) if r["event"] in ("Stop", "SessionEnd")}
    assert records["Stop"]["blocked"] is True and records["Stop"]["reason"] == "keep going"
    assert records["SessionEnd"]["reason"] == "bye"


def test_a_session_end_hook_gets_claude_codes_short_budget(ws: Path) -> None:
    # no timeout of its own: 1.5 s, not hookTimeout's 600 s; it is killed, the run ends
    hook = "sleep 30; touch late.txt"
    config = f"permissions: {{allow: [Bash]}}\nhooks:\n  SessionEnd: {group(hook)}\n"
    code, _results, _err = toolrun_exec(ws, config, [{"tool": "Bash", "input": {"command": "true"}}])
    assert code == 0 and not (ws / "late.txt").exists()
    (record,) = [r for r in journal(ws) if r["event"] == "SessionEnd"]
    (run,) = record["runs"]
    assert run["timed_out"] is True and "1.5 s" in run["error"]
