"""The GitHub Action (action.yml) run as GitHub runs it: each `run:` step is a bash script
(`bash --noprofile --norc -eo pipefail`) with the runner's env files (GITHUB_OUTPUT per
step, GITHUB_STEP_SUMMARY, RUNNER_TEMP) in tmp_path, on a repository in tmp_path. The
`uses:` steps (setup-python, upload-artifact, upload-sarif) are GitHub's own: checked for
what they are given, not run.

The install step really installs toolrun from this checkout (the action's own path) into a
fresh virtual environment; the environment sees the test's own packages (so pip fetches
only the build backend), and the test is skipped, saying so, when pip cannot reach its
index."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
SCHEMA = Path(__file__).with_name("sarif-schema-2.1.0.json")

RULES = """\
permissions:
  ask: ["Bash(git push *)"]
  deny: ["Bash(curl *)"]
  unknownKey: true
"""
GOOD = """\
calls:
  - {tool: Read, input: {file_path: toolrun.yaml}}
"""
BAD = """\
turns:
  - calls:
      - {tool: Read, input: {file_path: toolrun.yaml}}
      - {id: push, tool: Bash, input: {command: "git push origin main"}}
      - {id: fetch, tool: Bash, input: {command: "curl -s https://example.com"}}
"""

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def action() -> dict[str, Any]:
    data = yaml.safe_load(ACTION.read_text())
    assert isinstance(data, dict)
    return data


class Runner:
    """Just enough of a GitHub runner for a composite action of bash steps."""

    def __init__(self, tmp: Path, repo: Path, inputs: dict[str, str], path: str) -> None:
        spec = action()
        self.inputs = {k: str(v.get("default", "")) for k, v in spec["inputs"].items()}
        self.inputs.update(inputs)
        self.tmp = tmp
        self.repo = repo
        self.temp = tmp / "runner-temp"
        self.temp.mkdir()
        self.summary = tmp / "step-summary.md"
        self.summary.touch()
        self.outputs: dict[str, dict[str, str]] = {}
        self.path = path
        self.steps: list[dict[str, Any]] = spec["runs"]["steps"]

    def expr(self, text: str) -> str:
        """``${{ inputs.X }}``, ``${{ github.* }}``, ``${{ runner.temp }}`` and ``${{
        steps.ID.outputs.K }}``; any other expression fails the test."""

        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("inputs."):
                return self.inputs[name.removeprefix("inputs.")]
            if name == "github.action_path":
                return str(ROOT)
            if name == "github.workspace":
                return str(self.repo)
            if name == "runner.temp":
                return str(self.temp)
            found = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", name)
            if found:
                return self.outputs.get(found.group(1), {}).get(found.group(2), "")
            raise AssertionError(f"an expression this runner does not know: {name}")

        return _EXPR.sub(value, text)

    def run(self, step: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        assert step.get("shell") == "bash"
        assert "${{" not in step["run"], "inputs reach a script through env, not its text"
        output = self.tmp / f"output-{len(self.outputs)}"
        output.touch()
        env = {
            "PATH": self.path,
            "HOME": str(self.tmp / "home"),
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(self.repo),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "RUNNER_TEMP": str(self.temp),
        }
        env.update({k: self.expr(str(v)) for k, v in step.get("env", {}).items()})
        cwd = self.repo / self.expr(step.get("working-directory", "."))
        script = self.tmp / "step.sh"
        script.write_text(step["run"])
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            check=False,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if "id" in step:
            lines = output.read_text().splitlines()
            self.outputs[step["id"]] = dict(line.split("=", 1) for line in lines if "=" in line)
        return done

    def named(self, name: str) -> dict[str, Any]:
        return next(s for s in self.steps if s["name"] == name)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment, toolrun installed in it by the action's own install step."""
    root = tmp_path_factory.mktemp("action-venv")
    env_dir = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=300)
    purelib = Path(sysconfig.get_paths(vars={"base": str(env_dir)})["purelib"])
    # toolrun's dependencies from the test's environment: pip needs only the build backend
    (purelib / "test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    repo = root / "repo"
    repo.mkdir()
    runner = Runner(root, repo, {"plans": "x"}, f"{env_dir / 'bin'}{os.pathsep}/usr/bin:/bin")
    done = runner.run(runner.named("Install toolrun"))
    if done.returncode != 0:
        offline = r"Could not find a version|connection|network|resolve"
        if re.search(offline, done.stderr, re.IGNORECASE):
            pytest.skip(f"pip cannot reach its index to build toolrun: {done.stderr[-300:]}")
        raise AssertionError(done.stdout + done.stderr)
    assert f"installing toolrun from {ROOT}" in done.stdout
    assert "toolrun, version" in done.stdout
    return env_dir


def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "agent-plans").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "toolrun.yaml").write_text(RULES)
    (repo / "agent-plans" / "good.yaml").write_text(GOOD)
    (repo / "agent-plans" / "bad.yaml").write_text(BAD)
    return repo


def run_action(
    tmp_path: Path, venv: Path, inputs: dict[str, str]
) -> tuple[Runner, list[subprocess.CompletedProcess[str]]]:
    repo = repository(tmp_path)
    runner = Runner(tmp_path, repo, inputs, f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin")
    done = [
        runner.run(runner.named("Check the plans")),
        runner.run(runner.named("Fail on what the check found")),
    ]
    return runner, done


def test_the_action_is_a_composite_of_the_documented_inputs_and_outputs() -> None:
    spec = action()
    assert spec["runs"]["using"] == "composite"
    assert {"plans", "fail-on", "version", "args"} <= set(spec["inputs"])
    assert spec["inputs"]["plans"]["required"] is True
    assert spec["inputs"]["fail-on"]["default"] == "deny"
    assert {"exit-code", "sarif", "junit", "json"} <= set(spec["outputs"])
    uses = {s["uses"].split("@")[0]: s for s in spec["runs"]["steps"] if "uses" in s}
    assert set(uses) == {
        "actions/setup-python",
        "actions/upload-artifact",
        "github/codeql-action/upload-sarif",
    }
    # the artifact holds the reports the check step wrote, kept even when the check fails
    artifact = uses["actions/upload-artifact"]
    assert artifact["with"]["path"] == "${{ steps.check.outputs.dir }}"
    assert "!cancelled()" in artifact["if"]
    assert uses["github/codeql-action/upload-sarif"]["with"]["sarif_file"] == (
        "${{ steps.check.outputs.sarif }}"
    )
    # the step that fails the job comes after every upload
    names = [s["name"] for s in spec["runs"]["steps"]]
    assert names[-1] == "Fail on what the check found"


def test_a_denied_call_fails_the_job_after_every_report_is_written(
    tmp_path: Path, venv: Path
) -> None:
    runner, (check, fail) = run_action(tmp_path, venv, {"plans": "agent-plans/**/*.yaml"})
    assert check.returncode == 0, check.stderr  # the job goes on to upload the reports
    outputs = runner.outputs["check"]
    assert outputs["exit-code"] == "4"
    assert fail.returncode == 4
    assert "::error::toolrun check: a call would be denied (exit 4)" in fail.stdout
    # annotations on the plan's lines, paths relative to the repository
    assert "::error file=agent-plans/bad.yaml,line=5,col=9," in check.stdout
    assert "::warning file=agent-plans/bad.yaml,line=4,col=9," in check.stdout
    # the config's warning is an annotation on its own line of toolrun.yaml
    assert "::warning file=toolrun.yaml,line=4,col=3,title=toolrun%3A config warning::" in (
        check.stderr
    )
    # the reports, where the outputs say
    report_dir = Path(outputs["dir"])
    assert report_dir.is_relative_to(runner.temp)
    assert sorted(p.name for p in report_dir.iterdir()) == [
        "toolrun-junit.xml", "toolrun-summary.md", "toolrun.json", "toolrun.sarif",
    ]  # fmt: skip
    sarif = json.loads(Path(outputs["sarif"]).read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(sarif, json.loads(SCHEMA.read_text()))
    levels = sorted(r["level"] for r in sarif["runs"][0]["results"])
    assert levels == ["error", "warning", "warning"]  # the deny, the ask, the config key
    suites = ET.parse(outputs["junit"]).getroot()
    assert (suites.get("tests"), suites.get("failures"), suites.get("skipped")) == ("4", "1", "1")
    report = json.loads(Path(outputs["json"]).read_text())
    assert report["summary"]["exit_code"] == 4
    # the step summary, once
    summary = runner.summary.read_text()
    assert summary.count("### toolrun check") == 1
    assert "agent\\-plans/bad\\.yaml:5" in summary


def test_plans_that_pass_leave_the_job_green(tmp_path: Path, venv: Path) -> None:
    runner, (check, fail) = run_action(
        tmp_path, venv, {"plans": "agent-plans/good.yaml", "args": "--strict"}
    )
    # --strict (from args) makes the unknown key an error: exit 3, on its line
    assert runner.outputs["check"]["exit-code"] == "3"
    assert "::error file=toolrun.yaml,line=4,col=3," in check.stderr
    assert fail.returncode == 3
    (runner.repo / "toolrun.yaml").write_text(RULES.replace("  unknownKey: true\n", ""))
    check = runner.run(runner.named("Check the plans"))
    fail = runner.run(runner.named("Fail on what the check found"))
    assert runner.outputs["check"]["exit-code"] == "0"
    assert (check.returncode, fail.returncode) == (0, 0)
    assert "::" not in check.stdout.replace("::warning", "")  # no error annotation
    assert "toolrun check: nothing fails" in fail.stdout


def test_fail_on_ask_and_patterns_on_several_lines(tmp_path: Path, venv: Path) -> None:
    inputs = {"plans": "agent-plans/good.yaml\n  agent-plans/b*.yaml\n", "fail-on": "ask"}
    runner, (_, fail) = run_action(tmp_path, venv, inputs)
    assert runner.outputs["check"]["exit-code"] == "4"  # a deny outranks the ask
    assert fail.returncode == 4
    report = json.loads(Path(runner.outputs["check"]["json"]).read_text())
    assert report["plans"] == ["agent-plans/good.yaml", "agent-plans/bad.yaml"]
    assert report["summary"]["fail_on"] == "ask"
    # with --fail-on ask the ask is a failure, not a skipped test case
    suites = ET.parse(runner.outputs["check"]["junit"]).getroot()
    assert (suites.get("failures"), suites.get("skipped")) == ("2", "0")


def test_a_pattern_is_never_a_shell_command(tmp_path: Path, venv: Path) -> None:
    marker = tmp_path / "pwned"
    inputs = {"plans": f"agent-plans/good.yaml $(touch {marker}) ;touch {marker}"}
    runner, _ = run_action(tmp_path, venv, inputs)
    assert not marker.exists()
    # the words are patterns toolrun could not match: the input is invalid (exit 3)
    assert runner.outputs["check"]["exit-code"] == "3"
