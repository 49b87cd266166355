"""Every input yields calls or a problem; one bad call is one error; exec, validate and check
load inputs one way (issue 26, points 2 and 4). Each runs ``python -m toolrun`` as CI does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plan.formats_support import copy, toolrun, workspace

TYPE_KEYED = [
    # what the issue saw: codex exec events read as a Claude Code session, 0 calls, exit 0
    # (here: events of no agent, a type key each)
    ('{"type": "run.started", "run": "r-17"}\n{"type": "log", "text": "cat .env"}\n', 1, 1),
    ('\n{"type": "message", "text": "hi"}\n', 2, 1),
    ('  {"type": "assistant", "text": "cat .env"}\n', 1, 3),
    ('{"type": "user", "prompt": "x"}\n{"type": "summary", "note": "y"}\n', 1, 1),
]


@pytest.mark.parametrize(("text", "line", "column"), TYPE_KEYED)
def test_a_jsonl_of_no_known_format_is_a_located_problem(
    tmp_path: Path, text: str, line: int, column: int
) -> None:
    ws = workspace(tmp_path)
    (ws / "events.jsonl").write_text(text)
    run = toolrun(ws, "check", "events.jsonl")
    assert run.code == 3, run.stdout + run.stderr
    assert f"events.jsonl:{line}:{column}: not a format toolrun reads" in run.stderr
    allowed = toolrun(ws, "check", "--allow-empty", "events.jsonl")
    assert allowed.code == 0, allowed.stdout + allowed.stderr


@pytest.mark.parametrize("command", [["validate"], ["exec", "--dry-run"], ["exec"]])
def test_exec_and_validate_refuse_it_the_same_way(tmp_path: Path, command: list[str]) -> None:
    ws = workspace(tmp_path)
    (ws / "events.jsonl").write_text(TYPE_KEYED[0][0])
    run = toolrun(ws, *command, "events.jsonl")
    assert run.code == 3, run.stdout + run.stderr
    assert "events.jsonl:1:1: not a format toolrun reads" in run.stderr
    assert toolrun(ws, *command, "--allow-empty", "events.jsonl").code == 0


NO_CALLS = [
    ("claude-code-no-calls.jsonl", None, "claude-code", 1, 1),
    (None, ('{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n'
            '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"4"}}\n'),
     "codex-exec", 1, 1),
    (None, ('{"type":"system","subtype":"init","cwd":"/w","session_id":"s","tools":[]}\n'
            '{"type":"result","subtype":"success","is_error":false,"result":"4","session_id":"s"}'
            '\n'),
     "claude-stream", 1, 1),
    (None, "", "jsonl", 1, 1),  # an empty file: nothing was recorded
]


@pytest.mark.parametrize(("fixture", "text", "fmt", "line", "column"), NO_CALLS)
def test_records_without_a_call_are_a_located_problem_unless_allowed(
    tmp_path: Path, fixture: str | None, text: str | None, fmt: str, line: int, column: int
) -> None:
    ws = workspace(tmp_path)
    if fixture is not None:
        copy(ws, fixture, "s.jsonl")
    else:
        (ws / "s.jsonl").write_text(text or "")
    commands = [["check"], ["validate"], ["exec", "--dry-run"]] if fixture else [["check"]]
    for command in commands:
        run = toolrun(ws, *command, "s.jsonl")
        assert run.code == 3, (command, run.stdout, run.stderr)
        assert f"s.jsonl:{line}:{column}: no tool call in " in run.stderr
        assert f"(read as {fmt})" in run.stderr
        assert toolrun(ws, *command, "--allow-empty", "s.jsonl").code == 0


def test_a_conversation_without_tool_calls_is_a_problem_too(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "c.json").write_text(json.dumps([{"role": "user", "content": "hi"},
                                           {"role": "assistant", "content": "hello"}]))
    run = toolrun(ws, "check", "c.json")
    assert run.code == 3
    assert "c.json:1:1: no tool call in this document (read as anthropic)" in run.stderr


def test_a_session_whose_write_its_tool_refused_is_decided_but_that_call(tmp_path: Path) -> None:
    """Claude Code 2.0.76 answered a Write with an extra key with InputValidationError and
    went on: that call is one error, the rest is decided, the file is no exit 3."""
    ws = workspace(tmp_path)
    copy(ws, "claude-code-v2.0.76.jsonl", "s.jsonl")
    run = toolrun(ws, "check", "--format", "jsonl", "s.jsonl")
    assert run.code == 4, run.stderr  # the Bash call reading .env; never 3
    by_id = run.by_id()
    bad = by_id["toolu_01Bad"]
    assert bad["status"] == "error"
    assert bad["error"] == "invalid input for Write: mode: unknown key 'mode'"
    assert bad["decided_by"]["kind"] == "input"
    assert bad["location"] == {"file": "s.jsonl", "line": 3, "column": 337}
    assert by_id["toolu_01Good"]["decision"] == "ask"  # decided as any Write
    assert by_id["toolu_01Env"]["decided_by"]["rule"] == "Read(./.env)"
    # validate: the session loads; the refused call is a located warning
    valid = toolrun(ws, "validate", "s.jsonl")
    assert valid.code == 0, valid.stderr
    assert valid.stdout == "s.jsonl: ok (3 turns, 3 calls)\nsources: toolrun.yaml\n"
    assert "s.jsonl:3:337: toolu_01Bad: invalid input for Write" in valid.stderr


@pytest.mark.parametrize(
    ("tool", "tool_input", "error"),
    [
        ("Write", {"file_path": "a.txt", "content": "x", "mode": "w"}, "mode: unknown key 'mode'"),
        ("Edit", {"file_path": "a.txt", "old_string": "x"},
         "new_string: missing required key 'new_string'"),
        ("Read", {"path": "a.txt"}, "file_path: missing required key 'file_path'"),
        ("Bash", {"command": ["ls", "-la"]}, "command: Input should be a valid string"),
    ],
)
def test_each_refused_input_is_one_error_and_the_rest_runs(
    tmp_path: Path, tool: str, tool_input: dict[str, object], error: str
) -> None:
    ws = workspace(tmp_path, 'permissions:\n  allow: ["Edit(./ok.txt)"]\n')
    conversation = [
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "bad", "name": tool, "input": tool_input},
            {"type": "tool_use", "id": "good", "name": "Write",
             "input": {"file_path": "ok.txt", "content": "written\n"}},
        ]},
    ]  # fmt: skip
    (ws / "c.json").write_text(json.dumps(conversation))
    check = toolrun(ws, "check", "--format", "jsonl", "--fail-on", "never", "c.json")
    assert check.code == 0, check.stderr
    assert check.by_id()["good"]["decision"] == "allow"
    assert error in check.by_id()["bad"]["error"]
    run = toolrun(ws, "exec", "--format", "jsonl", "--no-journal", "c.json")
    assert run.code == 1, run.stderr  # one call failed, as the agent saw it fail
    by_id = run.by_id()
    assert by_id["bad"]["status"] == "error" and error in by_id["bad"]["error"]
    assert by_id["good"]["status"] == "ok"
    assert (ws / "ok.txt").read_text() == "written\n"


def test_exec_replays_a_ci_session_onto_the_workspace(tmp_path: Path) -> None:
    """``exec`` reads what ``check`` reads: the stream-json of a CI run of Claude Code is
    replayed, its recorded paths under the init cwd mapped onto the workspace."""
    ws = workspace(tmp_path, 'permissions:\n  deny: ["Read(./.env)"]\n  allow: ["Edit(./notes.txt)"]\n')
    copy(ws, "claude-stream.jsonl", "run.jsonl")
    run = toolrun(ws, "exec", "--format", "jsonl", "--no-journal", "run.jsonl")
    assert run.code == 4, run.stderr  # the cat .env
    by_id = run.by_id()
    assert by_id["toolu_01Ab2Cd3Ef4Gh5Ij6Kl7Mn8"]["status"] == "denied"
    assert by_id["toolu_01Op9Qr8St7Uv6Wx5Yz4Ab3C"]["status"] == "ok"
    assert (ws / "notes.txt").read_text() == "rotate the key\n"
    assert not Path("/home/runner/work/shop/shop/notes.txt").exists()
    # the dry run and check decide it the same
    dry = toolrun(ws, "exec", "--dry-run", "--format", "jsonl", "--no-journal", "run.jsonl")
    check = toolrun(ws, "check", "--format", "jsonl", "run.jsonl")
    assert dry.code == check.code == 4
    decided = {r["id"]: r["decision"] for r in dry.records()}
    assert decided == {r["id"]: r["decision"] for r in check.records()}


@pytest.mark.parametrize("command", [["check"], ["validate"], ["exec", "--dry-run"]])
def test_from_names_the_format_the_same_way_everywhere(tmp_path: Path, command: list[str]) -> None:
    ws = workspace(tmp_path)
    copy(ws, "codex-exec.jsonl", "run.jsonl")
    # read as what it is not, codex exec output holds no Claude Code record: no calls
    wrong = toolrun(ws, *command, "--from", "claude-code", "run.jsonl")
    assert wrong.code == 3
    assert "run.jsonl:1:1: no tool call in its 12 records, 12 skipped (read as claude-code)" in (
        wrong.stderr
    )
    fmt = ["--format", "json"] if command == ["validate"] else ["--format", "jsonl"]
    right = toolrun(ws, *command, *fmt, "--from", "codex-exec", "run.jsonl")
    detected = toolrun(ws, *command, *fmt, "run.jsonl")
    assert right.code == detected.code == (0 if command == ["validate"] else 4)
    if command == ["validate"]:
        assert json.loads(right.stdout)["files"] == json.loads(detected.stdout)["files"] == [
            {"file": "run.jsonl", "valid": True, "turns": 4, "calls": 5}
        ]
    else:
        assert [(r["id"], r["decision"]) for r in right.records()] == [
            (r["id"], r["decision"]) for r in detected.records()
        ]


WINDOWS = [
    "e:\\Workspace\\shop",
    "E:/Workspace/shop",
    "e:\\Workspace\\shop\\",
    "E:\\workspace\\Shop",  # Windows paths ignore case
]


@pytest.mark.parametrize("recorded", WINDOWS)
def test_a_windows_cwd_maps_onto_the_workspace_never_glued_to_it(
    tmp_path: Path, recorded: str
) -> None:
    ws = workspace(tmp_path)
    session = (Path(__file__).parent / "fixtures" / "claude-code-windows.jsonl").read_text()
    (ws / "s.jsonl").write_text(session.replace(json.dumps("e:\\Workspace\\shop")[1:-1],
                                                json.dumps(recorded)[1:-1], 1))
    run = toolrun(ws, "check", "--format", "jsonl", "s.jsonl")
    assert run.code == 4, run.stderr
    by_id = run.by_id()
    real = str(ws.resolve())
    assert by_id["toolu_01WinRead"]["input"]["file_path"] == f"{real}/src/app.py"
    assert by_id["toolu_01WinEnv"]["decided_by"]["rule"] == "Read(./.env)"
    assert {"field": "cwd", "recorded": "e:\\Workspace\\shop\\src", "rebased": f"{real}/src"} in (
        by_id["toolu_01WinLs"]["rebased"]
    )
    # a cwd outside the recorded root is left where it was, outside the workspace
    (outside,) = [r for r in by_id["toolu_01WinOut"]["rebased"] if r["field"] == "cwd"]
    assert outside["recorded"] == "C:\\Users\\dev\\other"
    assert not outside["rebased"].startswith(real)
    assert f"{real}/e:" not in run.stdout and f"{real}/E:" not in run.stdout
