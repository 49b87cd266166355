from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.commands.schema import config_schema, plan_schema

ROOT = Path(__file__).resolve().parents[2]
BUILTINS = [
    "ApplyPatch",
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "LS",
    "MultiEdit",
    "Read",
    "WebFetch",
    "Write",
]


def test_tools_table_lists_every_builtin(runner: CliRunner) -> None:
    result = runner.invoke(main, ["tools"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["tool", "kind", "concurrency-safe", "retry-safe", "source"]
    names = [line.split()[0] for line in lines[2:]]
    assert names == BUILTINS
    read = next(line for line in lines if line.startswith("Read "))
    assert read.split() == ["Read", "read", "always", "yes", "builtin"]
    bash = next(line for line in lines if line.startswith("Bash "))
    assert bash.split()[:4] == ["Bash", "execute", "read-only", "input"]


def test_tools_json(runner: CliRunner) -> None:
    result = runner.invoke(main, ["tools", "--format", "json"])
    rows = json.loads(result.stdout)
    assert [r["name"] for r in rows] == BUILTINS
    edit = next(r for r in rows if r["name"] == "Edit")
    assert edit["kind"] == "write" and edit["concurrency_safe"] == "never"


def test_tool_schema_uses_claude_code_field_names(runner: CliRunner) -> None:
    result = runner.invoke(main, ["tools", "--schema", "Edit"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert set(schema["required"]) == {"file_path", "old_string", "new_string"}
    assert "replace_all" in schema["properties"]
    grep = json.loads(runner.invoke(main, ["tools", "--schema", "Grep"]).stdout)
    assert {"-i", "-n", "-A", "-B", "-C"} <= set(grep["properties"])


def test_unknown_tool_schema_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(main, ["tools", "--schema", "Wirte"])
    assert result.exit_code == 2
    assert result.stderr == "unknown tool 'Wirte' (did you mean 'Write'?); see `toolrun tools`\n"
    assert result.stdout == ""


@pytest.mark.parametrize("what", ["plan", "config"])
def test_schema_command_matches_committed_file(runner: CliRunner, what: str) -> None:
    result = runner.invoke(main, ["schema", what])
    assert result.exit_code == 0
    committed = (ROOT / "schemas" / f"{what}.schema.json").read_text()
    assert result.stdout == committed, "schemas/ is stale: run scripts/regenerate.py"


def test_plan_schema_validates_tool_inputs_per_tool() -> None:
    schema = plan_schema()
    assert schema["$schema"].endswith("2020-12/schema")
    call = schema["$defs"]["CallSpec"]
    branches = {b["if"]["properties"]["tool"]["const"]: b["then"] for b in call["allOf"]}
    assert set(branches) == set(BUILTINS)
    ref = branches["Read"]["properties"]["input"]["$ref"]
    read_input = schema["$defs"][ref.rsplit("/", 1)[1]]
    assert "file_path" in read_input["required"]


def test_config_schema_knows_toolrun_keys() -> None:
    schema = config_schema()
    toolrun = schema["$defs"]["ToolrunSection"]
    assert toolrun["additionalProperties"] is False
    assert "maxConcurrency" in toolrun["properties"]
