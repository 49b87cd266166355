"""``toolrun check --compare-config``: only the calls whose decision changes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from toolrun.cli import main

ROOT = Path(__file__).resolve().parents[2]

BASE = """\
permissions:
  allow: ["Bash(npm test *)", "Edit(src/**)"]
  ask: ["Bash(git push *)"]
  deny: ["Bash(curl *)", "Read(./.env)"]
"""
PLAN = """\
calls:
  - {tool: Bash, input: {command: npm test -- a}}
  - {tool: Bash, input: {command: git push origin main}}
  - {tool: Bash, input: {command: curl https://example.com}}
  - {tool: Edit, input: {file_path: src/a.py, old_string: a, new_string: b}}
  - {tool: Read, input: {file_path: .env}}
  - {tool: Read, input: {file_path: README.md}}
"""


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text(BASE)
    (tmp_path / "plan.yaml").write_text(PLAN)
    return tmp_path


def diff(runner: CliRunner, new: str, *args: str, name: str = "new.yaml") -> Result:
    Path(name).write_text(new)
    return runner.invoke(
        main, ["check", "plan.yaml", "--compare-config", name, "--format", "json", *args]
    )


def changes(result: Result) -> dict[str, list[tuple[str, str, str]]]:
    report = json.loads(result.stdout)
    return {
        d: [(c["id"], c["before"]["decision"], c["after"]["decision"]) for c in report[d]]
        for d in ("loosened", "tightened")
    }


@pytest.mark.parametrize(
    ("new", "loosened"),
    [
        # the deny rule dropped: deny → ask
        (BASE.replace('"Bash(curl *)", ', ""), [("call-3", "deny", "ask")]),
        # the deny rule turned into an allow: deny → allow
        (BASE.replace('"Bash(curl *)", ', "").replace('"Edit', '"Bash(curl *)", "Edit'),
         [("call-3", "deny", "allow")]),
        # a broader allow hides the ask: ask → allow
        (BASE.replace('ask: ["Bash(git push *)"]', 'ask: []').replace('"Bash(npm', '"Bash(git *)", "Bash(npm'),
         [("call-2", "ask", "allow")]),
        # dontAsk in the new config only tightens (asks become denials)
        (BASE + "  defaultMode: dontAsk\n", []),
    ],
)  # fmt: skip
def test_loosened_calls_are_reported_and_fail_with_fail_on_loosen(
    runner: CliRunner, ws: Path, new: str, loosened: list[tuple[str, str, str]]
) -> None:
    result = diff(runner, new, "--fail-on", "loosen")
    assert changes(result)["loosened"] == loosened
    assert result.exit_code == (4 if loosened else 0)


def test_tightened_calls_do_not_fail_and_unchanged_calls_are_not_listed(
    runner: CliRunner, ws: Path
) -> None:
    new = BASE.replace("deny: [", 'deny: ["Bash(npm test *)", ') + "  defaultMode: dontAsk\n"
    result = diff(runner, new, "--fail-on", "loosen")
    assert result.exit_code == 0, result.output
    assert changes(result) == {
        "loosened": [],
        "tightened": [("call-1", "allow", "deny"), ("call-2", "ask", "deny")],
    }
    report = json.loads(result.stdout)
    first = report["tightened"][0]
    assert (
        first["before"]["rule"] == "Bash(npm test *)"
        and "toolrun.yaml:2" in (first["before"]["source"])
    )
    assert first["after"]["source"].startswith("new.yaml:4")
    assert report["summary"] == {**report["summary"], "calls": 6, "changed": 2}


def test_the_same_config_changes_nothing(runner: CliRunner, ws: Path) -> None:
    result = diff(runner, BASE, "--fail-on", "loosen")
    assert result.exit_code == 0
    assert changes(result) == {"loosened": [], "tightened": []}


def test_text_junit_and_github_name_both_deciders(runner: CliRunner, ws: Path) -> None:
    Path("new.yaml").write_text(BASE.replace('"Bash(curl *)", ', ""))
    base = ["check", "plan.yaml", "--compare-config", "new.yaml", "--fail-on", "loosen"]
    text = runner.invoke(main, [*base, "--format", "text", "-o", "diff.xml"])
    assert text.exit_code == 4
    assert "loosened (1):\n  plan.yaml:4:5: call-3 Bash(curl https://example.com): deny → ask;" in (
        text.stdout
    )
    assert "before: rule Bash(curl *) (toolrun.yaml:4)" in text.stdout
    assert "1 loosened, 0 tightened" in text.stdout
    suite = ET.parse("diff.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    github = runner.invoke(main, [*base, "--format", "github"])
    [annotation] = [line for line in github.stdout.splitlines() if line.startswith("::")]
    assert annotation.startswith("::error file=plan.yaml,line=4,col=5,title=toolrun policy diff")
    jsonl = runner.invoke(main, [*base, "--format", "jsonl"])
    assert [json.loads(line)["id"] for line in jsonl.stdout.splitlines()] == ["call-3"]


def test_compare_settings_replaces_the_settings_files(runner: CliRunner, ws: Path) -> None:
    Path("old.json").write_text('{"permissions": {"deny": ["Read"]}}')
    Path("new.json").write_text('{"permissions": {}}')
    result = runner.invoke(
        main,
        ["check", "plan.yaml", "--settings", "old.json", "--compare-settings", "new.json",
         "--format", "json", "--fail-on", "loosen"],
    )  # fmt: skip
    assert result.exit_code == 4
    assert changes(result)["loosened"] == [("call-6", "deny", "allow")]


def test_an_invalid_new_config_is_exit_3(runner: CliRunner, ws: Path) -> None:
    result = diff(runner, "permissions: {allow: ['Reed(x)']}\n", "--fail-on", "loosen")
    assert result.exit_code == 3 and "unknown tool 'Reed'" in result.stderr


def test_fail_on_loosen_needs_a_comparison(runner: CliRunner, ws: Path) -> None:
    result = runner.invoke(main, ["check", "plan.yaml", "--fail-on", "loosen"])
    assert result.exit_code == 2 and "--compare-config" in result.output
    result = diff(runner, BASE, "--fail-on", "ask")
    assert result.exit_code == 2 and "loosen or never" in result.output


def test_the_worked_example_in_plans_ci(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT / "plans" / "ci")
    result = runner.invoke(
        main,
        ["check", "agent-plans/**/*.yaml", "--compare-config", "proposed/toolrun.yaml",
         "--fail-on", "loosen", "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 4, result.output
    assert changes(result) == {
        "loosened": [("call-5", "ask", "allow")],
        "tightened": [("call-4", "allow", "ask")],
    }
