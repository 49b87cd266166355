"""CI output without noise: in a GitHub job (or with --format github) the config's warnings
and the problems of an invalid config or plan are annotations on their file and line; the
shards of a sharded check leave annotations and the step summary to the merge, which
writes each once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main

RULES = """\
permissions:
  deny: ["Bash(curl *)"]
  bogus: 1
"""
PLANS = {
    f"plans/p{i}.yaml": (
        "calls:\n  - {tool: Bash, input: {command: curl -s https://example.com}}\n"
        if i % 2
        else "calls:\n  - {tool: Read, input: {file_path: a.txt}}\n"
    )
    for i in range(6)
}
WARNING = re.compile(r"^::warning file=toolrun\.yaml,line=3,col=3,title=toolrun%3A config warning::")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "toolrun.yaml").write_text(RULES)
    (tmp_path / "a.txt").write_text("a\n")
    for name, text in PLANS.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    for var in ("GITHUB_WORKSPACE", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def lines(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [line for line in text.splitlines() if pattern.search(line)]


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["check", "plans/p0.yaml", "--format", "github"], {}),
        (["check", "plans/p0.yaml", "--format", "text"], {"GITHUB_ACTIONS": "true"}),
        (["exec", "plans/p0.yaml", "--format", "github", "--no-journal"], {}),
        (["exec", "plans/p0.yaml", "--format", "json", "--no-journal"], {"GITHUB_ACTIONS": "true"}),
    ],
)
def test_a_config_warning_is_an_annotation_on_its_line_in_ci(
    runner: CliRunner, ws: Path, args: list[str], env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert len(lines(result.stderr, WARNING)) == 1, result.stderr
    assert "unknown permissions key 'bogus'" in result.stderr
    # and not the plain line as well
    assert "toolrun.yaml:3:3: permissions.bogus" not in result.stderr


def test_outside_ci_the_warning_is_the_plain_line(runner: CliRunner, ws: Path) -> None:
    result = runner.invoke(main, ["check", "plans/p0.yaml", "--format", "text"])
    assert "toolrun.yaml:3:3: permissions.bogus: warning: unknown permissions key" in result.stderr
    assert "::" not in result.stderr


@pytest.mark.parametrize("command", ["check", "exec"])
def test_an_invalid_config_is_error_annotations_on_its_lines(
    runner: CliRunner, ws: Path, command: str
) -> None:
    (ws / "toolrun.yaml").write_text(RULES + '  ask: "not a list"\ntoolrun: {maxConcurrency: -1}\n')
    result = runner.invoke(main, [command, "plans/p0.yaml", "--format", "github"])
    assert result.exit_code == 3
    errors = [line for line in result.stderr.splitlines() if line.startswith("::error ")]
    assert len(errors) >= 2, result.stderr
    assert all(re.match(r"::error file=toolrun\.yaml,line=\d+,col=\d+,", e) for e in errors)
    assert any("line=4," in e for e in errors) and any("line=5," in e for e in errors)


def test_an_invalid_plan_in_a_job_is_an_error_annotation(
    runner: CliRunner, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    (ws / "toolrun.yaml").write_text('permissions:\n  deny: ["Bash(curl *)"]\n')
    (ws / "plans" / "bad.yaml").write_text("calls:\n  - {tool: Nope}\n")
    result = runner.invoke(main, ["check", "plans/bad.yaml", "--format", "text"])
    assert result.exit_code == 3
    assert result.stderr.startswith(
        "::error file=plans/bad.yaml,line=2,col=6,title=toolrun%3A invalid input::"
        "calls[0].tool: unknown tool 'Nope'"
    )


def test_shards_leave_annotations_and_the_summary_to_the_merge(
    runner: CliRunner, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = ws / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    annotation = re.compile(r"^::(error|warning)")
    for k in (1, 2, 3):
        result = runner.invoke(
            main,
            ["check", "plans/*.yaml", "--fail-on", "never", "--shard", f"{k}/3",
             "--format", "github", "-o", f"shard-{k}.json"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        # no annotation from a shard, and no summary: the merge says them once
        assert not lines(result.stdout + result.stderr, annotation), result.output
        assert "annotations and the step summary come from check --merge-reports" in (
            result.stderr
        )
    assert not summary.exists()
    result = runner.invoke(
        main, ["check", "--merge-reports", "shard-*.json", "--fail-on", "deny", "--format",
               "github", "-o", "merged.xml"],
    )  # fmt: skip
    assert result.exit_code == 4
    denied = lines(result.stdout, re.compile(r"^::error file=plans/p\d\.yaml,line=2,"))
    assert sorted(denied) == sorted(set(denied))  # each once
    assert len(denied) == 3
    assert len(lines(result.stderr, WARNING)) == 1  # the config's warning, once
    text = summary.read_text()
    assert text.count("### toolrun check") == 1
    assert text.count("| deny |") == 3
    assert "| config warning | toolrun\\.yaml:3 |" in text
