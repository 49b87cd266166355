"""SARIF 2.1.0 from `check --format sarif`, `check -o x.sarif` and `exec -o x.sarif`,
validated against the OASIS schema (vendored in tests/ci, see its README)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from toolrun.cli import main

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = json.loads(
    (Path(__file__).parents[1] / "ci" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8")
)
RULES = """\
permissions:
  ask: ["Bash(git push *)"]
  deny: ["Bash(curl *)", "Read(./.env)"]
  unknownKey: 1
"""
PLAN = """\
turns:
  - calls:
      - {id: readme, tool: Read, input: {file_path: README.md}}
      - {id: env, tool: Read, input: {file_path: .env}}
      - {id: push, tool: Bash, input: {command: "git push origin main"}}
      - {id: fetch, tool: Bash, input: {command: "curl -s https://example.com"}}
      - {id: deploy, tool: Bash, input: {command: "make deploy"}}
      - {id: outside, tool: Read, input: {file_path: /etc/hostname}}
"""


def valid(log: dict[str, Any]) -> dict[str, Any]:
    """The log, after the schema (Draft 7, as it declares) accepted it."""
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    jsonschema.Draft7Validator(SCHEMA).validate(log)
    return log


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "toolrun.yaml").write_text(RULES)
    (repo / "plans").mkdir()
    (repo / "plans" / "a plan #1.yaml").write_text(PLAN)
    monkeypatch.chdir(repo)
    for var in ("GITHUB_WORKSPACE", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"):
        monkeypatch.delenv(var, raising=False)
    return repo


def check_sarif(runner: CliRunner, *args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(main, ["check", *args, "--format", "sarif"])
    return result.exit_code, valid(json.loads(result.stdout))


def test_one_result_per_denied_or_asking_call_and_per_problem(
    runner: CliRunner, repo: Path
) -> None:
    (repo / "plans" / "bad.yaml").write_text("calls:\n  - {tool: Nope}\n")
    code, log = check_sarif(runner, "plans/a plan #1.yaml", "plans/bad.yaml")
    assert code == 3
    (run,) = log["runs"]
    assert run["tool"]["driver"]["name"] == "toolrun"
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 3}]
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == repo.as_uri() + "/"
    got = [
        (r["ruleId"], r["level"], r.get("properties", {}).get("callId"))
        for r in run["results"]
    ]
    assert got == [
        ("toolrun/config-warning", "warning", None),
        ("toolrun/deny/Read(./.env)", "error", "env"),
        ("toolrun/ask/Bash(git push *)", "warning", "push"),
        ("toolrun/deny/Bash(curl *)", "error", "fetch"),
        ("toolrun/default-ask", "warning", "deploy"),
        ("toolrun/boundary-ask", "warning", "outside"),
        ("toolrun/invalid-input", "error", None),
    ]  # the allowed Read of README.md is no result


def test_every_result_is_on_its_plan_line_under_a_rule_of_the_driver(
    runner: CliRunner, repo: Path
) -> None:
    _, log = check_sarif(runner, "plans/a plan #1.yaml")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(ids) == len(set(ids))  # each rule once
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert rules[result["ruleIndex"]]["shortDescription"]["text"]
    places = {
        r["properties"]["callId"]: r["locations"][0]["physicalLocation"]
        for r in run["results"]
        if "properties" in r
    }
    lines = {"env": 4, "push": 5, "fetch": 6, "deploy": 7, "outside": 8}
    for call, line in lines.items():
        place = places[call]
        assert place["region"] == {"startLine": line, "startColumn": 9}
        artifact = place["artifactLocation"]
        assert artifact["uriBaseId"] == "SRCROOT"
        # the space and the # of the file's name are escaped in the URI
        assert artifact["uri"] == "plans/a%20plan%20%231.yaml"
        assert unquote(artifact["uri"]) == "plans/a plan #1.yaml"
    # a rule's own line is a related location of the results it decided
    fetch = next(r for r in run["results"] if r["ruleId"] == "toolrun/deny/Bash(curl *)")
    (related,) = fetch["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "toolrun.yaml"
    assert related["physicalLocation"]["region"]["startLine"] == 3
    # the config warning is on its line of toolrun.yaml
    warning = run["results"][0]
    assert warning["locations"][0]["physicalLocation"]["region"]["startLine"] == 4
    assert "unknownKey" in warning["message"]["text"]


def test_fail_on_ask_makes_an_ask_an_error(runner: CliRunner, repo: Path) -> None:
    code, log = check_sarif(runner, "plans/a plan #1.yaml", "--fail-on", "ask")
    assert code == 4
    levels = {r["ruleId"]: r["level"] for r in log["runs"][0]["results"]}
    assert levels["toolrun/ask/Bash(git push *)"] == "error"
    assert levels["toolrun/config-warning"] == "warning"


def test_paths_are_relative_to_the_github_workspace_from_any_folder(
    runner: CliRunner, repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    monkeypatch.chdir(repo / "plans")
    (tmp_path / "elsewhere.yaml").write_text(PLAN)
    code, log = check_sarif(
        runner, "a plan #1.yaml", str(tmp_path / "elsewhere.yaml"), "--workspace", ".."
    )
    assert code == 4
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
        if "locations" in r and r["ruleId"] != "toolrun/config-warning"
    }
    # inside the repository: relative to its root; outside it: an absolute file: URI
    assert uris == {"plans/a%20plan%20%231.yaml", (tmp_path / "elsewhere.yaml").as_uri()}


def test_the_sarif_file_is_the_sarif_output(runner: CliRunner, repo: Path) -> None:
    result = runner.invoke(
        main, ["check", "plans/a plan #1.yaml", "-o", "out/r.sarif", "-o", "r.sarif.json"]
    )
    assert result.exit_code == 4
    first = valid(json.loads((repo / "out" / "r.sarif").read_text()))
    second = valid(json.loads((repo / "r.sarif.json").read_text()))
    assert len(first["runs"][0]["results"]) == len(second["runs"][0]["results"]) == 6


def test_exec_reports_denied_unapproved_and_failed_calls(runner: CliRunner, repo: Path) -> None:
    (repo / "plans" / "run.yaml").write_text(
        """\
calls:
  - {id: ok, tool: Bash, input: {command: "true"}}
  - {id: fetch, tool: Bash, input: {command: "curl -s https://example.com"}}
  - {id: push, tool: Bash, input: {command: "git push origin main"}}
  - {id: missing, tool: Read, input: {file_path: no-such-file}}
"""
    )
    result = runner.invoke(main, ["exec", "plans/run.yaml", "-o", "run.sarif", "--no-journal"])
    assert result.exit_code == 4
    (run,) = valid(json.loads((repo / "run.sarif").read_text()))["runs"]
    got = [(r["ruleId"], r["level"], r["properties"]["status"]) for r in run["results"][1:]]
    assert got == [
        ("toolrun/deny/Bash(curl *)", "error", "denied"),
        ("toolrun/ask/Bash(git push *)", "warning", "needs_approval"),
        ("toolrun/call-failed", "error", "error"),
    ]
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in run["results"]]
    assert lines[1:] == [3, 4, 5]
    assert run["invocations"][0]["exitCode"] == 4


def test_format_sarif_on_stdout_for_exec(runner: CliRunner, repo: Path) -> None:
    (repo / "toolrun.yaml").write_text(RULES.replace("  unknownKey: 1\n", ""))
    (repo / "plans" / "ok.yaml").write_text("calls:\n  - {tool: Bash, input: {command: 'true'}}\n")
    result = runner.invoke(main, ["exec", "plans/ok.yaml", "--format", "sarif", "--no-journal"])
    assert result.exit_code == 0
    log = valid(json.loads(result.stdout))
    assert log["runs"][0]["results"] == []  # a valid log of no findings


def test_a_warning_of_no_place_is_on_the_config_file(runner: CliRunner, repo: Path) -> None:
    """Code scanning shows a result only on a file: "ignored: statusLine" has no line of
    its own, and lands on the first config file read."""
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{"statusLine": {"type": "command"}}\n')
    _, log = check_sarif(runner, "plans/a plan #1.yaml")
    results = log["runs"][0]["results"]
    assert all(r.get("locations") for r in results)
    ignored = [r for r in results if "ignored: statusLine" in r["message"]["text"]]
    assert len(ignored) == 1
    where = ignored[0]["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"] in ("toolrun.yaml", ".claude/settings.json")
    assert "region" not in where  # no line: the file itself
