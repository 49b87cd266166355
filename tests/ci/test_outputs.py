"""`-o FILE` in exec and check: the report is the one its suffix names, `-o` may be given
several times, and an unknown suffix is a usage error before anything runs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main

RULES = 'permissions:\n  deny: ["Bash(curl *)"]\n'
PLAN = """\
calls:
  - {id: write, tool: Write, input: {file_path: made.txt, content: hello}}
  - {id: fetch, tool: Bash, input: {command: "curl -s https://example.com"}}
"""
COMMANDS = {
    "exec": ["exec", "plan.yaml", "--ask", "allow"],
    "check": ["check", "plan.yaml"],
}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "toolrun.yaml").write_text(RULES)
    (tmp_path / "plan.yaml").write_text(PLAN)
    monkeypatch.chdir(tmp_path)
    for var in ("GITHUB_WORKSPACE", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def kind_of(path: Path) -> str:
    """What a report file holds, read as a CI system would."""
    text = path.read_text(encoding="utf-8")
    if text.startswith("<?xml"):
        assert ET.fromstring(text.split("\n", 1)[1]).tag == "testsuites"
        return "junit"
    if text.startswith("### toolrun"):
        return "summary"
    try:
        data = json.loads(text)
    except ValueError:
        rows = [json.loads(line) for line in text.splitlines()]
        assert all("status" in r for r in rows)
        return "jsonl"
    return "sarif" if data.get("version") == "2.1.0" else "json"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_suffix_writes_its_report_and_every_o_is_written(
    runner: CliRunner, ws: Path, command: str
) -> None:
    names = {
        "r.json": "json",
        "r.jsonl": "jsonl",
        "r.xml": "junit",
        "sub/dir/R.XML": "junit",  # any case; folders made
        "r.sarif": "sarif",
        "r.sarif.json": "sarif",  # the other name upload-sarif takes
        "r.md": "summary",
    }
    args = [a for name in names for a in ("-o", name)]
    result = runner.invoke(main, [*COMMANDS[command], *args, "--format", "text"])
    assert result.exit_code == 4, result.output
    assert {name: kind_of(ws / name) for name in names} == names


def test_exec_o_xml_is_junit_whatever_the_format(runner: CliRunner, ws: Path) -> None:
    """The report: `exec -o r.xml` wrote JSON into r.xml."""
    for fmt in ("text", "json", "jsonl", "github"):
        result = runner.invoke(main, [*COMMANDS["exec"], "-o", "r.xml", "--format", fmt])
        assert result.exit_code == 4
        suites = ET.parse(ws / "r.xml").getroot()
        assert suites.get("name") == "toolrun exec"
        denied = suites.find("testsuite/testcase[@name='fetch Bash']")
        assert denied is not None and denied.find("failure") is not None
        assert (denied.get("file"), denied.get("line")) == ("plan.yaml", "3")


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("name", ["report.txt", "report", "report.yaml", "report.xml.bak"])
def test_an_unknown_suffix_is_a_usage_error_and_nothing_runs(
    runner: CliRunner, ws: Path, command: str, name: str
) -> None:
    result = runner.invoke(main, [*COMMANDS[command], "-o", "ok.json", "-o", name])
    assert result.exit_code == 2
    assert "Invalid value for '-o'" in result.stderr
    assert f"the name {name!r}" in result.stderr
    assert ".json, .jsonl, .xml (JUnit), .sarif (SARIF), .md (summary)" in result.stderr
    assert not (ws / "made.txt").exists()  # the Write never ran
    assert not (ws / ".toolrun").exists()  # no journal either
    assert not (ws / "ok.json").exists() and not (ws / name).exists()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_same_file_twice_is_a_usage_error(
    runner: CliRunner, ws: Path, command: str
) -> None:
    result = runner.invoke(main, [*COMMANDS[command], "-o", "r.json", "-o", "./r.json"])
    assert result.exit_code == 2
    assert "'r.json' is given twice" in result.stderr


def test_an_unwritable_report_leaves_the_others_written(runner: CliRunner, ws: Path) -> None:
    (ws / "taken").write_text("a file, not a folder")
    result = runner.invoke(main, [*COMMANDS["exec"], "-o", "taken/r.json", "-o", "r.xml"])
    assert result.exit_code == 4  # denied outranks the failed write (1)
    assert "cannot write taken/r.json" in result.stderr
    assert kind_of(ws / "r.xml") == "junit"
    result = runner.invoke(main, [*COMMANDS["check"], "-o", "taken/r.json", "-o", "c.sarif"])
    assert result.exit_code == 1
    assert kind_of(ws / "c.sarif") == "sarif"


def test_a_policy_diff_names_the_reports_it_can_write(runner: CliRunner, ws: Path) -> None:
    (ws / "new.yaml").write_text("permissions: {}\n")
    result = runner.invoke(
        main, ["check", "plan.yaml", "--compare-config", "new.yaml", "-o", "d.sarif"]
    )
    assert result.exit_code == 2
    assert "a policy diff writes junit, json, jsonl, github reports, not sarif" in result.stderr
    result = runner.invoke(
        main, ["check", "plan.yaml", "--compare-config", "new.yaml", "-o", "d.json", "-o", "d.xml"]
    )
    assert result.exit_code == 0
    assert kind_of(ws / "d.xml") == "junit" and json.loads((ws / "d.json").read_text())
