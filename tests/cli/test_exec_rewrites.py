"""Rewrites are auditable: a PreToolUse hook's updatedInput keeps the plan's input and
names the hook, in results, the journal, `show` and the text and table formats."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cli.processes import journal_records
from toolrun.cli import main

REWRITE = """import json, sys
event = json.load(sys.stdin)
command = event["tool_input"]["command"]
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                  "updatedInput": {"command": %s}}}))
"""


def hook(ws: Path, name: str, new_command: str) -> str:
    path = ws / "hooks" / f"{name}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(REWRITE % new_command)
    return f"{sys.executable} {path}"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.txt").write_text("keep me")
    (tmp_path / "plan.yaml").write_text(
        "calls:\n  - {id: rm, tool: Bash, input: {command: rm f.txt}}\n"
        "  - {id: plain, tool: Bash, input: {command: echo untouched}}\n"
    )
    return tmp_path


def configure(ws: Path, *hooks: tuple[str, str]) -> None:
    """Hooks in config order, each with its matcher `if` rule."""
    entries = "".join(
        f"      - {{type: command, command: '{cmd}', if: '{rule}'}}\n" for cmd, rule in hooks
    )
    (ws / "toolrun.yaml").write_text(
        "permissions: {allow: [Bash]}\nhooks:\n  PreToolUse:\n"
        f"    - matcher: Bash\n      sequential: true\n      hooks:\n{entries}"
    )


def test_the_result_and_journal_keep_the_original_input_and_the_hook(
    runner: CliRunner, ws: Path
) -> None:
    dry = hook(ws, "dry", '"echo would-" + command')
    configure(ws, (dry, "Bash(rm *)"))
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    rewritten, plain = (json.loads(line) for line in result.stdout.splitlines())
    assert (ws / "f.txt").exists()  # what ran is the rewrite
    assert rewritten["output"] == "would-rm f.txt\n"
    assert rewritten["input"] == {"command": "echo would-rm f.txt"}
    assert rewritten["original_input"] == {"command": "rm f.txt"}
    assert rewritten["input_rewritten_by"] == [{"command": dry, "source": "toolrun.yaml:7"}]
    assert "original_input" not in plain and "input_rewritten_by" not in plain
    (journalled,) = [r for r in journal_records(ws) if r["event"] == "result" and r["id"] == "rm"]
    assert journalled["original_input"] == {"command": "rm f.txt"}
    assert journalled["input_rewritten_by"] == rewritten["input_rewritten_by"]


def test_each_hook_that_changed_the_input_is_named_in_order(runner: CliRunner, ws: Path) -> None:
    first = hook(ws, "first", '"echo would-" + command')
    # sequential: the second sees the first's rewrite; `same` gives back what it got
    second = hook(ws, "second", '(command + " #checked") if "would-" in command else command')
    same = hook(ws, "same", "command")
    configure(ws, (first, "Bash(rm *)"), (second, "Bash"), (same, "Bash"))
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    rewritten, plain = (json.loads(line) for line in result.stdout.splitlines())
    assert rewritten["input"] == {"command": "echo would-rm f.txt #checked"}
    assert [h["command"] for h in rewritten["input_rewritten_by"]] == [first, second]
    assert "original_input" not in plain  # its hooks gave its input back unchanged


@pytest.mark.parametrize("fmt", ["text", "table"])
def test_text_and_table_show_that_hooks_ran(runner: CliRunner, ws: Path, fmt: str) -> None:
    configure(ws, (hook(ws, "dry", '"echo would-" + command'), "Bash(rm *)"))
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", fmt])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    rewritten, plain = lines[2:4] if fmt == "table" else lines[:2]  # past the table's header
    assert "would-rm" in rewritten
    assert "hooks: PreToolUse rewrote the input (was rm f.txt)" in rewritten
    assert "hooks:" not in plain  # its hook's `if` did not match: no hook ran for it


def test_show_prints_the_original_the_rewrite_and_the_hook(runner: CliRunner, ws: Path) -> None:
    dry = hook(ws, "dry", '"echo would-" + command')
    configure(ws, (dry, "Bash(rm *)"))
    assert runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"]).exit_code == 0
    listed = runner.invoke(main, ["show", "last"])
    (row,) = [line for line in listed.stdout.splitlines() if line.startswith("1 ")]
    assert "hooks: PreToolUse rewrote the input (was rm f.txt)" in row
    one = runner.invoke(main, ["show", "last", "rm"]).stdout.splitlines()
    assert 'input:     {"command": "rm f.txt"}' in one
    assert 'rewritten: {"command": "echo would-rm f.txt"}' in one
    assert f"       by: `{dry}` (toolrun.yaml:7)" in one
    assert any(line.startswith(f"hook:      PreToolUse `{dry}`") for line in one)
