"""``toolrun lint``: rules that never decide, duplicates, easy-to-evade denials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.config import load_config
from toolrun.policy.lint import lint_rules


def findings(tmp_path: Path, yaml: str) -> list[tuple[str, str]]:
    (tmp_path / "toolrun.yaml").write_text(yaml)
    return [(f.kind, f.rule) for f in lint_rules(load_config(workspace=tmp_path, env={}))]


@pytest.mark.parametrize(
    ("deny", "allow"),
    [
        ("Bash(git *)", "Bash(git push origin main)"),
        ("Bash(git:*)", "Bash(git push *)"),
        ("Bash", "Bash(npm test *)"),
        ("Bash(npm *)", "Bash(npm test:*)"),
        ("Read(./secrets/**)", "Read(./secrets/**)"),
        ("*", "Edit(src/**)"),
        ("mcp__github__*", "mcp__github__get_file"),
    ],
)
@pytest.mark.parametrize("earlier", ["deny", "ask"])
def test_an_allow_rule_covered_by_a_deny_or_ask_rule_is_shadowed(
    tmp_path: Path, deny: str, allow: str, earlier: str
) -> None:
    found = findings(tmp_path, f"permissions:\n  {earlier}: ['{deny}']\n  allow: ['{allow}']\n")
    assert ("shadowed", allow) in found


@pytest.mark.parametrize(
    ("deny", "allow"),
    [
        ("Bash(git push *)", "Bash(git *)"),  # the allow is broader: it still allows git log
        ("Bash(npm test)", "Bash(npm test *)"),
        ("Read(./.env)", "Read"),
        ("Bash(rm *)", "Bash(rmdir x)"),
    ],
)
def test_a_partly_covered_allow_rule_is_not_shadowed(tmp_path: Path, deny: str, allow: str) -> None:
    found = findings(tmp_path, f"permissions:\n  deny: ['{deny}']\n  allow: ['{allow}']\n")
    assert ("shadowed", allow) not in found


def test_duplicates_across_sources_name_the_first(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"permissions": {"allow": ["Read"]}}')
    (tmp_path / "toolrun.yaml").write_text("permissions:\n  allow: [Read]\n")
    config = load_config(workspace=tmp_path, env={}, settings_files=[tmp_path / "s.json"])
    [finding] = lint_rules(config)
    assert finding.kind == "duplicate" and finding.source.endswith("toolrun.yaml:2")
    assert "s.json:1" in finding.message


@pytest.mark.parametrize(
    "rule", ["Write(src/**)", "Glob(src)", "MultiEdit(src/**)", "NotebookEdit(a.ipynb)"]
)
def test_an_allow_path_rule_on_the_wrong_tool_never_matches(tmp_path: Path, rule: str) -> None:
    assert findings(tmp_path, f"permissions:\n  allow: ['{rule}']\n") == [("never-matches", rule)]


def test_a_domain_rule_on_bash_never_matches(tmp_path: Path) -> None:
    found = findings(tmp_path, "permissions:\n  deny: ['Bash(domain:evil.com)']\n")
    assert ("never-matches", "Bash(domain:evil.com)") in found


@pytest.mark.parametrize(
    ("rule", "suggested"),
    [
        ("Bash(rm -rf *)", "Bash(rm *)"),
        ("Bash(curl http://x)", "Bash(curl *)"),
        # the sub-command stays: `git *` would make `git diff` ask (issue 29)
        ("Bash(git push --force *)", "Bash(git push *)"),
        ("Bash(docker compose down -v)", "Bash(docker compose down *)"),
        ("Bash(npm publish --tag latest)", "Bash(npm publish *)"),
    ],
)
def test_a_bash_deny_on_arguments_suggests_the_command_rule(
    tmp_path: Path, rule: str, suggested: str
) -> None:
    (tmp_path / "toolrun.yaml").write_text(f"permissions:\n  deny: ['{rule}']\n")
    [finding] = lint_rules(load_config(workspace=tmp_path, env={}))
    assert finding.kind == "argument-deny"
    assert finding.message.endswith(f"the command: {suggested}")


@pytest.mark.parametrize("behavior", ["ask", "deny"])
@pytest.mark.parametrize(
    "rule",
    ["Bash(git push *)", "Bash(npm run test:*)", "Bash(docker compose up *)",
     "Bash(kubectl delete *)", "Bash(git push)", "Bash(terraform apply*)"],
)  # fmt: skip
def test_a_rule_scoped_to_a_sub_command_is_command_level(
    tmp_path: Path, behavior: str, rule: str
) -> None:
    # the README's own `ask: Bash(git push *)` was flagged, with `Bash(git *)` suggested
    assert findings(tmp_path, f"permissions:\n  {behavior}: ['{rule}']\n") == []


@pytest.mark.parametrize("rule", ["Bash(rm *)", "Bash(curl)", "Bash(curl:*)", "Bash"])
def test_a_command_level_deny_is_fine(tmp_path: Path, rule: str) -> None:
    assert findings(tmp_path, f"permissions:\n  deny: ['{rule}']\n") == []


@pytest.mark.parametrize("rule", ["Edit(//etc/**)", "Read(~/.ssh/**)", "Edit(../other/**)"])
def test_an_allow_beyond_the_workspace_is_reported(tmp_path: Path, rule: str) -> None:
    assert findings(tmp_path, f"permissions:\n  allow: ['{rule}']\n") == [
        ("outside-workspace", rule)
    ]


def test_lint_cli_exit_codes_json_and_unused_rules(
    tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text(
        "permissions:\n  allow: ['Bash(npm test *)', 'Edit(src/**)']\n  deny: ['Bash(curl *)']\n"
    )
    clean = runner.invoke(main, ["lint"])
    assert clean.exit_code == 0 and clean.stdout == "no findings\n"
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "a.yaml").write_text(
        "calls:\n  - {tool: Bash, input: {command: npm test -- x}}\n"
    )
    used = runner.invoke(main, ["lint", "--plans", "plans/*.yaml", "--format", "json"])
    assert used.exit_code == 1
    report = json.loads(used.stdout)
    assert [(f["kind"], f["rule"], f["line"]) for f in report["findings"]] == [
        ("unused", "Edit(src/**)", 2),
        ("unused", "Bash(curl *)", 3),
    ]
    assert runner.invoke(main, ["lint", "--plans", "nothing/*.yaml"]).exit_code == 3
