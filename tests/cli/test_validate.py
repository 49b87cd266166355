from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(
    p
    for p in (ROOT / "plans").rglob("*")
    if p.suffix in (".yaml", ".json") and p.name != "toolrun.yaml"
)


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_at_least_five_example_plans() -> None:
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("plan", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_plan_validates(
    runner: CliRunner, plan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    result = runner.invoke(
        main, ["validate", str(plan.relative_to(ROOT)), "--workspace", str(plan.parent)]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{plan.relative_to(ROOT)}: ok (")
    assert result.stderr == ""


def test_valid_plans_report_turns_and_calls(runner: CliRunner, in_tmp: Path) -> None:
    (in_tmp / "a.yaml").write_text("calls:\n  - {tool: LS, input: {path: .}}\n")
    (in_tmp / "b.yaml").write_text(
        "turns:\n  - calls: [{tool: LS, input: {path: .}}]\n  - calls: [{tool: LS, input: {path: .}}, {tool: Read, input: {file_path: x}}]\n"
    )
    result = runner.invoke(main, ["validate", "a.yaml", "b.yaml"])
    assert result.exit_code == 0
    assert result.stdout == "a.yaml: ok (1 turn, 1 call)\nb.yaml: ok (2 turns, 3 calls)\n"


def test_invalid_plans_exit_3_and_list_every_problem(runner: CliRunner, in_tmp: Path) -> None:
    (in_tmp / "good.yaml").write_text("calls: [{tool: LS, input: {path: .}}]\n")
    (in_tmp / "bad.yaml").write_text(
        "turns:\n  - calls:\n      - {tool: Reed, input: {file_path: a}}\n      - {tool: Read, input: {file_path: 3}}\n"
    )
    result = runner.invoke(main, ["validate", "good.yaml", "bad.yaml"])
    assert result.exit_code == 3
    assert result.stdout == "good.yaml: ok (1 turn, 1 call)\n"
    assert result.stderr == (
        "bad.yaml:3:10: turns[0].calls[0].tool: unknown tool 'Reed' (did you mean 'Read'?)\n"
        "bad.yaml:4:30: turns[0].calls[1].input.file_path: Input should be a valid string\n"
        "2 problems in 1 file; nothing was executed\n"
    )


def test_missing_plan_file(runner: CliRunner, in_tmp: Path) -> None:
    result = runner.invoke(main, ["validate", "nope.yaml"])
    assert result.exit_code == 3
    assert result.stderr == "nope.yaml: no such file\n1 problem in 1 file; nothing was executed\n"


def test_invalid_config_is_reported_with_the_plans(runner: CliRunner, in_tmp: Path) -> None:
    (in_tmp / "toolrun.yaml").write_text("toolrun:\n  maxConcurency: 3\n")
    (in_tmp / "p.yaml").write_text("calls: [{tool: Nope}]\n")
    result = runner.invoke(main, ["validate", "p.yaml"])
    assert result.exit_code == 3
    assert result.stderr == (
        "toolrun.yaml:2:3: toolrun.maxConcurency: unknown key 'maxConcurency' (did you mean 'maxConcurrency'?)\n"
        "p.yaml:1:10: calls[0].tool: unknown tool 'Nope'\n"
        "2 problems in 2 files; nothing was executed\n"
    )


def test_config_from_env_var(runner: CliRunner, in_tmp: Path) -> None:
    (in_tmp / "other.yaml").write_text("toolrun: {hookFailure: sometimes}\n")
    (in_tmp / "p.yaml").write_text("calls: [{tool: LS, input: {path: .}}]\n")
    result = runner.invoke(main, ["validate", "p.yaml"], env={"TOOLRUN_CONFIG": "other.yaml"})
    assert result.exit_code == 3
    assert result.stderr.startswith(
        "other.yaml:1:11: toolrun.hookFailure: Input should be 'open' or 'closed'\n"
    )


def test_no_plan_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(main, ["validate"])
    assert result.exit_code == 2
    assert "Missing argument 'PLANS...'" in result.stderr


def test_bad_mode_is_a_usage_error(runner: CliRunner, in_tmp: Path) -> None:
    result = runner.invoke(main, ["validate", "x.yaml", "--mode", "yolo"])
    assert result.exit_code == 2
    assert (
        "'yolo' is not one of 'default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'"
        in result.stderr
    )
