"""Codex CLI rollouts: detected, imported as the calls Codex made, decided by the rules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.check.helpers import FIXTURES, fixture, write
from toolrun.cli import main
from toolrun.errors import PlanError
from toolrun.plan.formats.codex_rollout import script
from toolrun.plan.importers import load_input
from toolrun.tools import default_registry

RULES = (
    'permissions:\n  allow: ["Edit(src/**)", "mcp__github__create_issue"]\n'
    '  deny: ["Bash(curl *)"]\n'
)


def test_a_rollout_is_detected_and_each_call_becomes_the_tool_it_was() -> None:
    imported = load_input(FIXTURES / "codex-rollout.jsonl", default_registry())
    assert imported.format == "codex"
    calls = [(c.turn, c.id, c.tool, dict(c.input)) for c in imported.plan.calls]
    patch = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** End Patch\n"
    assert calls == [
        (0, "call_shell_lc", "Bash", {"command": "ls -la"}),  # bash -lc SCRIPT is SCRIPT
        (0, "call_shell_argv", "Bash", {"command": "rg -n 'it'\"'\"'s here' src"}),
        (1, "call_exec", "Bash", {"command": "cat README.md > /home/dev/proj/notes.txt"}),
        (2, "call_patch", "ApplyPatch", {"patch": patch}),
        (3, "call_mcp", "mcp__github__create_issue", {"title": "Build fails"}),
        (3, "call_mcp_old", "mcp__docs__search", {"q": "x"}),
        (4, "call_plan", "TodoWrite", {"plan": [{"step": "fix", "status": "in_progress"}]}),
        (5, "call_local", "Bash", {"command": "curl -s https://example.com"}),
    ]
    cwd_of = {c.id: imported.cwds[c.index] for c in imported.plan.calls}
    assert cwd_of["call_exec"] == "/home/dev/proj/docs"  # its workdir
    assert cwd_of["call_shell_lc"] == "/home/dev/proj"
    assert [w.message for w in imported.warnings] == [
        "skipped: unknown response item type 'brand_new_item'",
        "skipped: unknown record type 'brand_new_record'",
    ]


def test_a_rollout_is_decided_in_the_workspace(ws: Path) -> None:
    write(ws / "toolrun.yaml", RULES)
    fixture(ws, "codex-rollout.jsonl")
    run = CliRunner().invoke(main, ["check", "--format", "jsonl", "codex-rollout.jsonl"])
    assert run.exit_code == 4
    by_id = {r["id"]: r for r in map(json.loads, run.stdout.splitlines())}
    assert by_id["call_patch"]["decision"] == "allow"  # Edit(src/**) covers the patch
    assert by_id["call_mcp"]["decision"] == "allow"
    assert by_id["call_mcp_old"]["decision"] == "ask"
    assert by_id["call_local"]["decision"] == "deny"
    assert by_id["call_exec"]["input"]["command"] == f"cat README.md > {ws}/notes.txt"
    assert by_id["call_exec"]["rebased"][0] == {
        "field": "cwd", "recorded": "/home/dev/proj/docs", "rebased": f"{ws}/docs"
    }


def test_malformed_rollout_records_are_located_problems() -> None:
    with pytest.raises(PlanError) as err:
        load_input(FIXTURES / "codex-malformed.jsonl", default_registry(), display="m.jsonl")
    assert [str(p) for p in err.value.problems] == [
        (
            "m.jsonl:2:125: payload.arguments: not valid JSON: Expecting ',' delimiter "
            "(at character 18 of the string)"
        ),
        (
            "m.jsonl:3:125: payload.arguments: command: a number, not a command "
            "(an argv list or a command string)"
        ),
        "m.jsonl:4:74: payload.name: missing required key 'name'",
        "m.jsonl:5:130: payload.input: must be a string, not a list",
        "m.jsonl:6:74: payload: must be an object, not a string",
        "m.jsonl:7:162: payload.call_id: must be a string, not a number",
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["plain", "two words", "it's", 'say "hi"', "$HOME", "`id`", "a;b", "*", "~", "", "\\"],
        ["--flag=$(rm -rf /)", "new\nline", "tab\there", "!", "{a,b}"],
    ],
)
def test_an_argv_is_quoted_so_that_bash_gives_it_back(args: list[str]) -> None:
    echo = [sys.executable, "-c", "import sys, json; print(json.dumps(sys.argv[1:]))"]
    out = subprocess.run(
        ["bash", "-c", script([*echo, *args])], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == args


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["bash", "-lc", "ls | wc -l"], "ls | wc -l"),
        (["/bin/sh", "-c", "echo hi"], "echo hi"),
        (["zsh", "-lc", "x"], "x"),
        (["bash", "-lc", "x", "extra"], "bash -lc x extra"),  # $0 given: not just a script
        (["bash", "-x", "-c", "x"], "bash -x -c x"),
        (["python3", "-c", "print(1)"], "python3 -c 'print(1)'"),
    ],
)
def test_only_a_plain_shell_c_is_unwrapped(argv: list[str], expected: str) -> None:
    assert script(argv) == expected
