"""Session logs are append-only files a crash can cut short: what cannot be read is skipped,
located and counted (``--strict`` makes it an error); sidechains are turns of their own."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.check.helpers import FIXTURES, fixture, write
from toolrun.cli import main
from toolrun.plan.importers import load_input
from toolrun.tools import default_registry

NAME = "claude-code-tolerant.jsonl"
SKIPPED = [
    f"warning: {NAME}:4:199: skipped: unknown record type 'brand-new-record-type'",
    f"warning: {NAME}:5:1: skipped: each line must be a JSON object, not a list",
    f"warning: {NAME}:6:1: skipped: each line must be a JSON object, not a string",
    (
        f"warning: {NAME}:9:71: skipped: invalid JSON: Expecting property name enclosed in "
        "double quotes (a torn last line)"
    ),
]


def test_unreadable_records_are_skipped_located_and_counted(ws: Path) -> None:
    fixture(ws, NAME)
    run = CliRunner().invoke(main, ["check", "--format", "text", NAME])
    assert run.exit_code == 0
    assert run.stderr.splitlines() == [*SKIPPED, "sources: none (built-in defaults)"]
    assert "3 allow · 4 records skipped" in run.stdout
    # the torn call is not decided: it was never read
    assert "toolu_torn" not in run.stdout


def test_the_json_report_lists_and_counts_them(ws: Path) -> None:
    fixture(ws, NAME)
    run = CliRunner().invoke(main, ["check", "--format", "json", NAME])
    report = json.loads(run.stdout)
    assert report["summary"]["warnings"] == 4
    assert [w["line"] for w in report["warnings"]] == [4, 5, 6, 9]
    assert report["summary"]["exit_code"] == 0


def test_strict_makes_them_errors(ws: Path) -> None:
    fixture(ws, NAME)
    run = CliRunner().invoke(main, ["check", "--strict", "--format", "text", NAME])
    assert run.exit_code == 3
    assert run.stderr.splitlines() == [
        *(line.removeprefix("warning: ").replace("skipped: ", "") + " (--strict)"
          for line in SKIPPED),
        "sources: none (built-in defaults)",
    ]


def test_the_old_malformed_fixture_is_now_checked_with_a_warning(ws: Path) -> None:
    fixture(ws, "claude-code-malformed.jsonl")
    run = CliRunner().invoke(main, ["check", "--format", "text", "claude-code-malformed.jsonl"])
    assert run.exit_code == 0
    assert run.stderr.startswith(
        "warning: claude-code-malformed.jsonl:3:119: skipped: invalid JSON: Unterminated string"
    )


def test_a_sidechain_is_a_turn_of_its_own_and_marked(ws: Path) -> None:
    """It shares the main message's id, yet it is another agent's call."""
    imported = load_input(FIXTURES / NAME, default_registry(), source_format="claude-code")
    turns = [[c.id for c in t.calls] for t in imported.plan.turns]
    assert turns == [["toolu_main_read"], ["toolu_side_ls"], ["toolu_main_grep"]]
    side = next(c.index for c in imported.plan.calls if c.id == "toolu_side_ls")
    assert imported.marks == {side: "sidechain"}
    fixture(ws, NAME)
    run = CliRunner().invoke(main, ["check", "--format", "jsonl", NAME])
    origins = {r["id"]: r.get("origin") for r in map(json.loads, run.stdout.splitlines())}
    assert origins == {"toolu_main_read": None, "toolu_side_ls": "sidechain", "toolu_main_grep": None}


def test_a_call_stream_is_still_strict(ws: Path) -> None:
    """A toolrun call stream is written by a program, not appended by a live agent."""
    write(ws / "c.jsonl", '{"tool": "LS", "input": {}}\n[1]\n')
    assert CliRunner().invoke(main, ["check", "c.jsonl"]).exit_code == 3


def _assistant(message_id: str, call_id: str, tool: str, tool_input: dict[str, object]) -> str:
    return json.dumps(
        {
            "type": "assistant",
            "isSidechain": True,
            "agentId": "a1b2c3",
            "cwd": "/home/dev/proj",
            "message": {
                "id": message_id,
                "role": "assistant",
                "content": [{"type": "tool_use", "id": call_id, "name": tool, "input": tool_input}],
            },
        }
    )


def test_subagent_logs_beside_a_session_are_checked_as_their_own_turns(ws: Path) -> None:
    fixture(ws, "claude-code-recorded-cwd.jsonl", "s1.jsonl")
    subagents = ws / "s1" / "subagents"
    write(
        subagents / "agent-a1b2c3.jsonl",
        _assistant("msg_s1", "toolu_sub_read", "Read", {"file_path": "/home/dev/proj/a.py"})
        + "\n"
        + _assistant("msg_s2", "toolu_sub_curl", "Bash", {"command": "curl https://x.example"})
        + "\n{torn",
    )
    write(ws / "toolrun.yaml", 'permissions:\n  deny: ["Bash(curl *)"]\n')
    run = CliRunner().invoke(main, ["check", "--format", "jsonl", "s1.jsonl"])
    assert run.exit_code == 4  # the subagent's curl is denied
    by_id = {r["id"]: r for r in map(json.loads, run.stdout.splitlines())}
    shown = "s1/subagents/agent-a1b2c3.jsonl"
    curl = by_id["toolu_sub_curl"]
    assert (curl["decision"], curl["origin"]) == ("deny", f"subagent {shown}")
    assert (curl["location"]["file"], curl["location"]["line"]) == (shown, 2)
    assert by_id["toolu_sub_read"]["decision"] == "allow"  # rebased like the main log
    assert f"warning: {shown}:3:2: skipped:" in run.stderr
    assert by_id["toolu_edit"].get("origin") is None


def test_a_subagent_call_also_kept_in_the_main_log_is_decided_once(ws: Path) -> None:
    write(ws / "s2.jsonl", _assistant("msg_1", "toolu_same", "Bash", {"command": "ls"}) + "\n")
    write(
        ws / "s2" / "subagents" / "agent-x.jsonl",
        _assistant("msg_1", "toolu_same", "Bash", {"command": "ls"}) + "\n",
    )
    run = CliRunner().invoke(main, ["check", "--format", "jsonl", "s2.jsonl"])
    assert run.exit_code == 0
    assert len(run.stdout.splitlines()) == 1
    assert "skipped: call 'toolu_same' was read already at s2.jsonl:1:" in run.stderr


def test_a_glob_over_a_session_and_its_subagents_checks_each_call_once(ws: Path) -> None:
    write(ws / "logs" / "s3.jsonl", _assistant("m1", "toolu_main", "Bash", {"command": "ls"}) + "\n")
    write(
        ws / "logs" / "s3" / "subagents" / "agent-y.jsonl",
        _assistant("m2", "toolu_sub", "Bash", {"command": "pwd"}) + "\n",
    )
    write(  # a subagent log whose session is not an input is an input of its own
        ws / "other" / "s4" / "subagents" / "agent-z.jsonl",
        _assistant("m3", "toolu_alone", "Bash", {"command": "pwd"}) + "\n",
    )
    run = CliRunner().invoke(main, ["check", "--format", "json", "logs/**/*.jsonl", "other/**/*.jsonl"])
    report = json.loads(run.stdout)
    assert report["plans"] == ["logs/s3.jsonl", "other/s4/subagents/agent-z.jsonl"]
    assert [r["id"] for r in report["results"]] == ["toolu_main", "toolu_sub", "toolu_alone"]
