"""`toolrun check` on a session recorded elsewhere: its cwd is decided as the workspace."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.check.helpers import fixture, write
from toolrun.cli import main

RULES = 'permissions:\n  allow: ["Edit(src/**)", "Bash(git diff *)"]\n'


def results(ws: Path, *args: str) -> tuple[int, dict[str, dict[str, object]]]:
    run = CliRunner().invoke(main, ["check", "--format", "jsonl", *args])
    records = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    return run.exit_code, {r["id"]: r for r in records}


def test_paths_under_the_recorded_cwd_are_decided_in_the_workspace(ws: Path) -> None:
    write(ws / "toolrun.yaml", RULES)
    (ws / "src").mkdir()
    session = fixture(ws, "claude-code-recorded-cwd.jsonl")
    _, by_id = results(ws, str(session))
    edit = by_id["toolu_edit"]
    assert edit["decision"] == "allow"
    assert edit["input"]["file_path"] == f"{ws}/src/app.py"
    assert edit["rebased"] == [
        {"field": "file_path", "recorded": "/home/dev/proj/src/app.py", "rebased": f"{ws}/src/app.py"}
    ]
    assert by_id["toolu_readme"]["decision"] == "allow"
    assert by_id["toolu_cd"]["decision"] == "allow"
    assert by_id["toolu_cd"]["input"]["command"] == f"cd {ws}/src && ls"
    # the redirect is rebased: a write inside the workspace, no longer "outside"
    assert f"{ws}/out.txt" in by_id["toolu_redirect"]["reason"]


def test_paths_outside_the_recorded_cwd_stay_outside(ws: Path) -> None:
    write(ws / "toolrun.yaml", RULES)
    _, by_id = results(ws, str(fixture(ws, "claude-code-recorded-cwd.jsonl")))
    for call_id in ("toolu_sibling", "toolu_dotdot"):
        assert by_id[call_id]["decision"] == "ask"
        assert "outside the workspace" in str(by_id[call_id]["reason"])
        assert "rebased" not in by_id[call_id]


def test_a_call_keeps_its_own_recorded_cwd(ws: Path) -> None:
    write(ws / "toolrun.yaml", RULES)
    _, by_id = results(ws, str(fixture(ws, "claude-code-recorded-cwd.jsonl")))
    sub = by_id["toolu_sub"]
    assert sub["rebased"] == [
        {"field": "cwd", "recorded": "/home/dev/proj/src", "rebased": f"{ws}/src"}
    ]
    assert sub["decision"] == "allow"  # ls ../README.md from src/ is inside


def session_line(tool: str, tool_input: dict[str, object], cwd: str = "/home/dev/proj") -> str:
    return json.dumps(
        {
            "type": "assistant",
            "cwd": cwd,
            "message": {
                "id": f"msg_{abs(hash(json.dumps(tool_input)))}",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"t{abs(hash(json.dumps(tool_input)))}",
                     "name": tool, "input": tool_input}
                ],
            },
        }
    )


def test_no_climb_from_the_workspace_into_an_additional_directory(tmp_path: Path) -> None:
    """``..`` below the recorded cwd must not land beside the workspace after rebasing."""
    ws = tmp_path / "ws"
    shared = tmp_path / "shared"
    ws.mkdir()
    shared.mkdir()
    (shared / "x").write_text("x")
    write(ws / "toolrun.yaml", f"permissions:\n  additionalDirectories: ['{shared}']\n")
    attacks = [
        session_line("Read", {"file_path": "/home/dev/proj/../shared/x"}),
        session_line("Bash", {"command": "cat /home/dev/proj/../shared/x"}),
        session_line("Bash", {"command": 'cat /home/dev/proj/.""./shared/x'}),
        session_line("Bash", {"command": 'cat "/home/dev/proj/"../shared/x'}),
        session_line("Bash", {"command": "cd /home/dev/proj/.. && cat shared/x"}),
    ]
    session = write(ws / "s.jsonl", "\n".join(attacks) + "\n")
    code, by_id = results(ws, "--workspace", str(ws), "--config", str(ws / "toolrun.yaml"), "--fail-on", "ask", str(session))
    assert len(by_id) == len(attacks)
    assert {r["decision"] for r in by_id.values()} == {"ask"}, by_id
    assert code == 5


def test_transcript_cwd_maps_a_format_without_a_recorded_cwd(ws: Path) -> None:
    write(ws / "toolrun.yaml", RULES)
    plan = write(
        ws / "calls.jsonl",
        '{"tool": "Edit", "input": {"file_path": "/srv/app/src/a.py", "old_string": "a",'
        ' "new_string": "b"}}\n'
        '{"tool": "Read", "input": {"file_path": "/srv/other/a.py"}}\n',
    )
    _, without = results(ws, str(plan))
    assert without["call-1"]["decision"] == "ask"
    _, by_id = results(ws, "--transcript-cwd", "/srv/app", str(plan))
    assert by_id["call-1"]["decision"] == "allow"
    assert by_id["call-1"]["rebased"][0]["recorded"] == "/srv/app/src/a.py"
    assert by_id["call-2"]["decision"] == "ask"


def test_a_session_recorded_at_the_root_is_not_mapped(ws: Path) -> None:
    """Mapping ``/`` would move /etc/shadow into the workspace."""
    session = write(
        ws / "s.jsonl", session_line("Read", {"file_path": "/etc/shadow"}, cwd="/") + "\n"
    )
    _, by_id = results(ws, str(session))
    (only,) = by_id.values()
    assert only["decision"] == "ask"
    assert only["input"]["file_path"] == "/etc/shadow"


def test_the_text_report_shows_the_recorded_and_the_decided_path(ws: Path) -> None:
    write(ws / "toolrun.yaml", RULES)
    run = CliRunner().invoke(
        main, ["check", "--format", "text", str(fixture(ws, "claude-code-recorded-cwd.jsonl"))]
    )
    assert (
        f"    file_path recorded /home/dev/proj/src/app.py → decided as {ws}/src/app.py"
        in run.stdout
    )
