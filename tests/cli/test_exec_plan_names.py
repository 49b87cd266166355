"""With several plans every output names the plan of each call, as `show PLAN:CALL` takes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main


@pytest.fixture
def two_plans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    for name in ("a.yaml", "sub/b.yaml"):
        (tmp_path / name).write_text(
            f"calls:\n  - {{tool: Bash, input: {{command: 'echo from {name}'}}}}\n"
        )
    return tmp_path


def test_text_lines_name_the_plan_of_each_call(runner: CliRunner, two_plans: Path) -> None:
    done = runner.invoke(main, ["exec", "a.yaml", "sub/b.yaml", "--jobs", "2", "--format", "text"])
    assert done.exit_code == 0, done.output
    names = sorted(line.split()[1] for line in done.stdout.splitlines()[:2])
    assert names == ["a.yaml:call-1", "sub/b.yaml:call-1"]


def test_one_plan_keeps_the_bare_call_id(runner: CliRunner, two_plans: Path) -> None:
    done = runner.invoke(main, ["exec", "a.yaml", "--format", "text"])
    assert done.stdout.split()[1] == "call-1"


def test_the_table_has_a_plan_column(runner: CliRunner, two_plans: Path) -> None:
    done = runner.invoke(main, ["exec", "a.yaml", "sub/b.yaml", "--format", "table"])
    lines = done.stdout.splitlines()
    assert lines[0].split()[0] == "plan"
    assert sorted(line.split()[0] for line in lines[2:4]) == ["a.yaml", "sub/b.yaml"]


@pytest.mark.parametrize(
    ("spelling", "printed"),
    [
        ("a.yaml:call-1", "from a.yaml"),
        ("sub/b.yaml:call-1", "from sub/b.yaml"),
        ("b.yaml:call-1", "from sub/b.yaml"),  # the file name, as --plan takes it
        ("b:call-1", "from sub/b.yaml"),  # the stem
        ("b:1", "from sub/b.yaml"),  # the call's number
    ],
)
def test_show_takes_the_name_text_output_prints(
    runner: CliRunner, two_plans: Path, spelling: str, printed: str
) -> None:
    assert runner.invoke(main, ["exec", "a.yaml", "sub/b.yaml", "--format", "jsonl"]).exit_code == 0
    shown = runner.invoke(main, ["show", "last", spelling])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.endswith(f"{printed}\n")


def test_show_plan_call_that_names_nothing_is_a_usage_error(
    runner: CliRunner, two_plans: Path
) -> None:
    runner.invoke(main, ["exec", "a.yaml", "sub/b.yaml", "--format", "jsonl"])
    for spelling in ("c.yaml:call-1", "a.yaml:call-9", ":call-1", "a.yaml:"):
        shown = runner.invoke(main, ["show", "last", spelling])
        assert shown.exit_code == 2, spelling
        assert "has no call" in shown.stderr


def test_an_id_containing_a_colon_is_found_as_it_is(runner: CliRunner, two_plans: Path) -> None:
    (two_plans / "c.yaml").write_text(
        "calls:\n  - {id: 'x:y', tool: Bash, input: {command: 'echo colon'}}\n"
    )
    runner.invoke(main, ["exec", "c.yaml", "--format", "jsonl"])
    assert runner.invoke(main, ["show", "last", "x:y"]).stdout.endswith("colon\n")


def test_json_names_the_plan_of_each_result(runner: CliRunner, two_plans: Path) -> None:
    done = runner.invoke(main, ["exec", "a.yaml", "sub/b.yaml", "--format", "json"])
    report = json.loads(done.stdout)
    assert sorted(r["plan"] for r in report["results"]) == ["a.yaml", "sub/b.yaml"]
