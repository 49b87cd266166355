"""The plans/ci example and its GitHub Actions workflow stay true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from toolrun.cli import main

EXAMPLE = Path(__file__).parents[2] / "plans" / "ci"
COMMAND = "toolrun check 'agent-plans/**/*.yaml' --format github -o toolrun-report.xml"


def test_the_example_fails_on_the_two_denied_calls(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # As the README's workflow runs it: in plans/ci, with the checkout as GITHUB_WORKSPACE
    # (annotation paths are relative to it, so they land on the pull request; and the two
    # calls that would ask get warnings: before #14 they got nothing).
    monkeypatch.chdir(EXAMPLE)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(EXAMPLE.parents[1]))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    report = tmp_path / "toolrun-report.xml"
    result = runner.invoke(
        main, ["check", "agent-plans/**/*.yaml", "--format", "github", "-o", str(report)]
    )
    assert result.exit_code == 4, result.output
    lines = result.stdout.splitlines()
    release = "plans/ci/agent-plans/release.yaml"
    assert [line.split("::")[1] for line in lines[:-1]] == [
        f"warning file={release},line=10,col=9,title=toolrun%3A Edit call call-3 would need approval",
        f"error file={release},line=11,col=9,title=toolrun%3A Bash call call-4 would be denied",
        f"warning file={release},line=13,col=9,title=toolrun%3A Bash call call-5 would need approval",
        f"error file={release},line=14,col=9,title=toolrun%3A Bash call call-6 would be denied",
    ]
    assert "deny rule Bash(curl *) (toolrun.yaml:17)" in lines[1]
    assert "PreToolUse hook" in lines[3] and "force pushes rewrite shared history" in lines[3]
    assert lines[-1].startswith(
        "3 inputs, 14 calls: 10 allow · 2 ask · 2 deny — 2 failing, 2 asks not failing (--fail-on deny)"
    )
    assert report.read_text().count("<failure ") == 2


def test_the_readme_workflow_runs_the_documented_command() -> None:
    readme = (EXAMPLE / "README.md").read_text()
    (block,) = re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL)
    workflow = yaml.safe_load(block)
    steps = workflow["jobs"]["toolrun-check"]["steps"]
    runs = [s.get("run") for s in steps]
    assert COMMAND in runs
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert "actions/upload-artifact" in uses and "mikepenz/action-junit-report" in uses
    reports = [s for s in steps if "with" in s and "toolrun-report.xml" in str(s["with"])]
    assert len(reports) == 2
