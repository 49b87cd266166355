"""Gemini CLI sessions: detected, their shell, file and web tools decided as Claude Code's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.check.helpers import FIXTURES, fixture, write
from toolrun.cli import main
from toolrun.errors import PlanError
from toolrun.plan.importers import load_input
from toolrun.tools import default_registry


def test_a_session_is_detected_and_its_tools_mapped() -> None:
    imported = load_input(FIXTURES / "gemini-session.json", default_registry())
    assert imported.format == "gemini"
    calls = [(c.turn, c.tool, dict(c.input)) for c in imported.plan.calls]
    assert calls == [
        (0, "LS", {"path": "/home/dev/proj"}),
        (0, "Read", {"file_path": "/home/dev/proj/README.md"}),
        (0, "Glob", {"pattern": "src/**/*.py"}),
        (1, "Edit", {"file_path": "/home/dev/proj/src/app.py", "old_string": "teh", "new_string": "the"}),
        (1, "Bash", {"command": "pytest -q", "description": "Run the tests"}),
        (1, "WebFetch", {"url": "https://docs.python.org/3/library/re.html",
                         "prompt": "Summarise https://docs.python.org/3/library/re.html"}),
        (1, "WebSearch", {"query": "pytest fixtures"}),
        (1, "Write", {"file_path": "/home/dev/.bashrc", "content": "x"}),
        (1, "save_memory", {"fact": "likes tests"}),
    ]
    bash = next(c for c in imported.plan.calls if c.tool == "Bash")
    assert imported.cwds == {bash.index: "tests"}  # its directory, relative to the project


def test_a_session_is_decided_with_transcript_cwd(ws: Path) -> None:
    write(ws / "toolrun.yaml", 'permissions:\n  allow: ["Edit(src/**)", "Bash(pytest *)"]\n')
    (ws / "src").mkdir()
    fixture(ws, "gemini-session.json")
    run = CliRunner().invoke(
        main,
        ["check", "--format", "jsonl", "--transcript-cwd", "/home/dev/proj", "gemini-session.json"],
    )
    by_tool = {r["tool"]: r for r in map(json.loads, run.stdout.splitlines())}
    assert by_tool["Edit"]["decision"] == "allow"
    assert by_tool["Read"]["decision"] == "allow"
    assert by_tool["Bash"]["decision"] == "allow"
    assert by_tool["Bash"]["rebased"] == [{"field": "cwd", "recorded": "tests", "rebased": f"{ws}/tests"}]
    assert by_tool["Write"]["decision"] == "ask"  # ~/.bashrc of the session's machine: outside
    assert by_tool["WebSearch"]["decision"] == "ask"
    assert by_tool["save_memory"]["decision"] == "ask"


@pytest.mark.parametrize(
    ("prompt", "tool"),
    [
        ("Summarise https://a.example/x", "WebFetch"),
        ("Compare https://a.example/x and https://b.example/y", "web_fetch"),  # two: by name
        ("What is the news?", "web_fetch"),
    ],
)
def test_web_fetch_is_a_web_fetch_of_its_one_url(tmp_path: Path, prompt: str, tool: str) -> None:
    session = {"projectHash": "h", "messages": [{"type": "gemini", "toolCalls": [
        {"id": "w", "name": "web_fetch", "args": {"prompt": prompt}}]}]}
    path = write(tmp_path / "s.json", json.dumps(session))
    (call,) = load_input(path, default_registry()).plan.calls
    assert call.tool == tool


def test_malformed_sessions_are_located_problems() -> None:
    with pytest.raises(PlanError) as err:
        load_input(FIXTURES / "gemini-malformed.json", default_registry(), display="g.json")
    assert [str(p) for p in err.value.problems] == [
        "g.json:9:20: messages[0].toolCalls: must be a list, not an object",
        "g.json:18:9: messages[1].toolCalls[0]: a tool call must be an object, not a string",
        "g.json:19:9: messages[1].toolCalls[1].name: missing required key 'name'",
        "g.json:26:19: messages[1].toolCalls[2].args: must be an object, not a string",
        "g.json:29:17: messages[1].toolCalls[3].id: must be a string, not a number",
        "g.json:44:5: messages[2]: a message must be an object, not a number",
    ]

