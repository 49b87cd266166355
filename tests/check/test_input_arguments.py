"""What `check` and `validate` read from their arguments: folders recurse, `~` expands.

A folder is walked for the plans and sessions in it (as ruff and pytest recurse), and only
files whose content toolrun reads count, so a repository's package.json or CI YAML is no
problem; a quoted glob or path starting with `~` is the home folder, as the shell would have
made it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main

PLAN = "calls:\n  - {tool: Read, input: {file_path: a.txt}}\n"
JSON_PLAN = json.dumps({"calls": [{"tool": "LS", "input": {"path": "."}}]})
STREAM = (
    '{"tool": "Read", "input": {"file_path": "a.txt"}}\n{"tool": "LS", "input": {"path": "."}}\n'
)
SESSION = (
    json.dumps({"type": "user", "cwd": "/home/dev/proj", "sessionId": "s",
                "message": {"role": "user", "content": "hi"}}) + "\n"
    + json.dumps({"type": "assistant", "cwd": "/home/dev/proj", "sessionId": "s",
                  "message": {"role": "assistant", "content": [
                      {"type": "tool_use", "id": "t1", "name": "Bash",
                       "input": {"command": "ls"}}]}}) + "\n"
)  # fmt: skip


def tree(root: Path) -> Path:
    """Plans, a session and things that are not plans, in a folder of a workspace."""
    agent = root / "agent"
    files = {
        "a.yaml": PLAN, "deep/b.json": JSON_PLAN, "deep/calls.jsonl": STREAM,
        "deep/er/session.jsonl": SESSION,
        # not plans: never read, never a problem
        "package.json": '{"name": "x", "version": "1.0.0"}', "ci.yaml": "on: push\njobs: {}\n",
        "toolrun.yaml": "permissions: {}\n", ".hidden/c.yaml": PLAN, "node_modules/d.yaml": PLAN,
        "notes.md": "calls:\n", "events.jsonl": '{"level": "info"}\n{"level": "warn"}\n',
    }  # fmt: skip
    for name, text in files.items():
        (agent / name).parent.mkdir(parents=True, exist_ok=True)
        (agent / name).write_text(text)
    (root / "a.txt").write_text("x\n")
    return agent


EXPECTED = ["agent/a.yaml", "agent/deep/b.json", "agent/deep/calls.jsonl",
            "agent/deep/er/session.jsonl"]  # fmt: skip


def checked_inputs(args: list[str]) -> tuple[int, list[str]]:
    run = CliRunner().invoke(main, ["check", *args, "--format", "json", "--no-hooks"])
    report = json.loads(run.stdout)
    return run.exit_code, [entry["file"] for entry in report["inputs"]]


@pytest.mark.parametrize("spelling", ["agent", "agent/", "./agent", "{ws}/agent"])
def test_a_folder_argument_recurses_over_the_plans_and_sessions_in_it(
    ws: Path, spelling: str
) -> None:
    tree(ws)
    code, inputs = checked_inputs([spelling.format(ws=ws)])
    assert [Path(i).as_posix().removeprefix(f"{ws}/").removeprefix("./") for i in inputs] == [
        *EXPECTED
    ]
    assert code == 0


def test_a_file_named_outright_is_always_read(ws: Path) -> None:
    tree(ws)
    code, inputs = checked_inputs(["agent/ci.yaml"])
    assert inputs == ["agent/ci.yaml"] and code == 3  # not a plan: said, not skipped


@pytest.mark.parametrize("command", ["check", "validate"])
def test_a_folder_with_nothing_to_read_is_a_problem(ws: Path, command: str) -> None:
    (ws / "empty" / "sub").mkdir(parents=True)
    (ws / "empty" / "package.json").write_text("{}")
    run = CliRunner().invoke(main, [command, "empty"])
    assert run.exit_code == 3
    assert "empty: this folder holds no plan or session toolrun reads" in run.output


def test_validate_recurses_too(ws: Path) -> None:
    tree(ws)
    run = CliRunner().invoke(main, ["validate", "agent"])
    assert run.exit_code == 0, run.output
    assert [line.split(":")[0] for line in run.stdout.splitlines() if ": ok (" in line] == EXPECTED


@pytest.mark.parametrize(
    "spelling",
    ["~/agent/deep/*.json", "~/agent/deep/**/*.jsonl", "~/agent", "~/agent/a.yaml"],
)
def test_a_tilde_in_a_quoted_argument_is_the_home_folder(
    ws: Path, spelling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = ws / "home"
    tree(home)
    monkeypatch.setenv("HOME", str(home))
    code, inputs = checked_inputs([spelling])
    assert inputs, spelling
    assert all(Path(i).is_absolute() or i.startswith("home/") for i in inputs), inputs
    assert code == 0


def test_a_tilde_pattern_that_matches_nothing_names_the_pattern(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(ws))
    run = CliRunner().invoke(main, ["check", "~/nothing/*.jsonl"])
    assert run.exit_code == 3
    assert "~/nothing/*.jsonl: no file matches this pattern" in run.output


def test_exec_reads_a_folder_as_check_and_validate_do(ws: Path) -> None:
    tree(ws)
    run = CliRunner().invoke(main, ["exec", "agent", "--dry-run", "--format", "json", "--no-hooks"])
    report = json.loads(run.stdout)
    assert report["plans"] == EXPECTED, run.stderr
