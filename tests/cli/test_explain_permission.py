"""``toolrun explain-permission``: input forms, output, exit codes, errors, completion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.cli.explain import TOOL_NAMES

CONFIG = """\
permissions:
  allow:
    - "Bash(npm run test:*)"
    - "Edit(src/**)"
    - "Bash(git *)"
  ask:
    - "Bash(git push *)"
  deny:
    - "Read(./.env)"
    - "Bash(rm -rf *)"
"""
EDIT_CALL = json.dumps(
    {"tool": "Edit", "input": {"file_path": "src/a.py", "old_string": "a", "new_string": "b"}}
)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "proj"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "a.py").write_text("a = 1\n")
    (workspace / "toolrun.yaml").write_text(CONFIG)
    monkeypatch.chdir(workspace)
    return workspace


def run(runner: CliRunner, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(main, ["explain-permission", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("Bash", "git push origin main"),
        ("Bash(git push origin main)",),
        ("--call", '{"tool": "Bash", "input": {"command": "git push origin main"}}'),
        ("Bash", "git", "push", "origin", "main"),
    ],
)
def test_three_forms_agree(runner: CliRunner, ws: Path, args: tuple[str, ...]) -> None:
    code, out, err = run(runner, *args, "--format", "json")
    assert (code, err) == (5, "")
    data = json.loads(out)
    assert data["decision"] == "ask"
    assert data["input"] == {"command": "git push origin main"}
    assert data["decided_by"] == {
        "kind": "rule",
        "rule": "Bash(git push *)",
        "source": "toolrun.yaml:7",
    }


@pytest.mark.parametrize(
    ("args", "code", "decision"),
    [
        (("Bash", "git status"), 0, "allow"),
        (("Bash", "npm run test -- --watch"), 0, "allow"),
        (("Bash", "npm test && rm -rf build"), 4, "deny"),
        (("Bash", "npm install"), 5, "ask"),
        (("Read(.env)",), 4, "deny"),
        (("Read", "src/a.py"), 0, "allow"),
        (("Edit", "src/a.py"), 0, "allow"),
        (("Write", "/etc/passwd"), 5, "ask"),
        (("Grep", "needle", "src"), 0, "allow"),
        (("WebFetch", "https://example.com"), 5, "ask"),
        (("--call", EDIT_CALL), 0, "allow"),
    ],
)
def test_exit_codes(
    runner: CliRunner, ws: Path, args: tuple[str, ...], code: int, decision: str
) -> None:
    got, out, err = run(runner, *args, "--format", "json")
    assert err == ""
    assert got == code
    assert json.loads(out)["decision"] == decision


def test_text_output_has_every_section(runner: CliRunner, ws: Path) -> None:
    code, out, err = run(runner, "Bash", "git push origin main && rm -rf build; echo hi > out.txt")
    assert (code, err) == (4, "")
    lines = out.splitlines()
    assert lines[0] == "call:       Bash(git push origin main && rm -rf build; echo hi > out.txt)"
    assert lines[1] == "mode:       default (from built-in default)"
    assert lines[2] == f"workspace:  {ws}"
    assert "boundary:" in lines
    assert f"  redirect > {ws}/out.txt: inside {ws}" in lines
    subs = lines.index("sub-commands:")
    assert lines[subs + 1] == "  1. git push origin main"
    assert lines[subs + 2].startswith("     ask: ask rule Bash(git push *) (toolrun.yaml:7)")
    assert "  2. rm -rf build" in lines
    assert "     deny: deny rule Bash(rm -rf *) (toolrun.yaml:10) matches `rm -rf build`" in lines
    assert "  3. echo hi" in lines
    rules = lines.index("rules considered (deny, then ask, then allow; the first match decides):")
    rule_lines = lines[rules + 1 : rules + 13]
    # every rule, deny first, with its source file:line and why
    assert [line.split()[:2] for line in rule_lines[::2]] == [
        ["deny", "Read(./.env)"],
        ["deny", "Bash(rm"],
        ["ask", "Bash(git"],
        ["allow", "Bash(npm"],
        ["allow", "Edit(src/**)"],
        ["allow", "Bash(git"],
    ]
    assert rule_lines[0].endswith("toolrun.yaml:9")
    assert "MATCHED, decisive: matches 'rm -rf build'" in rule_lines[3]
    assert "matched, shadowed: matches 'git push origin main', but shadowed" in rule_lines[11]
    assert "no match: does not match 'git push origin main'" in rule_lines[7]
    assert lines[-2] == "decided by: rule Bash(rm -rf *) (toolrun.yaml:10)"
    assert lines[-1].startswith("decision:   DENY — denied: deny rule Bash(rm -rf *)")


def test_text_output_for_a_file_tool(runner: CliRunner, ws: Path) -> None:
    (ws / "link").symlink_to("/etc/hostname")
    code, out, err = run(runner, "Read", "link")
    assert (code, err) == (5, "")
    assert f"  file_path {ws}/link -> /etc/hostname: OUTSIDE the workspace" in out
    assert "checked:" in out
    assert "decided by: the workspace boundary" in out


def test_unanalysable_command_is_explained(runner: CliRunner, ws: Path) -> None:
    code, out, _ = run(runner, "Bash", "for f in *; do git log $f; done")
    assert code == 5
    assert "not analysable (no rule can allow this command):" in out
    assert "  - unsupported shell construct: for_statement" in out


def test_mode_and_its_source(runner: CliRunner, ws: Path) -> None:
    code, out, _ = run(runner, "Edit", "src/b.py", "--mode", "plan")
    assert code == 4
    assert "mode:       plan (from --mode)" in out
    (ws / "toolrun.yaml").write_text(CONFIG + "  defaultMode: acceptEdits\n")
    code, out, _ = run(runner, "Write", "src/b.py")
    assert code == 0
    assert "mode:       acceptEdits (from toolrun.yaml:11)" in out


def test_settings_file_rules_are_named(runner: CliRunner, ws: Path, tmp_path: Path) -> None:
    settings = tmp_path / "ci.json"
    settings.write_text('{\n  "permissions": {\n    "deny": ["Bash(npm run test:*)"]\n  }\n}\n')
    code, out, _ = run(
        runner, "Bash", "npm run test", "--settings", str(settings), "--format", "json"
    )
    assert code == 4
    decided = json.loads(out)["decided_by"]
    assert decided["rule"] == "Bash(npm run test:*)"
    assert decided["source"].endswith("ci.json:3")


def test_cwd_option(runner: CliRunner, ws: Path) -> None:
    assert run(runner, "Bash", "cat a.py", "--cwd", "src")[0] == 0
    assert run(runner, "Bash", "cat a.py", "--cwd", "/")[0] == 5


def test_malformed_rule_is_exit_3_at_file_line(runner: CliRunner, ws: Path) -> None:
    (ws / "toolrun.yaml").write_text('permissions:\n  allow:\n    - "Bash(git"\n')
    code, out, err = run(runner, "Bash", "ls")
    assert code == 3
    assert out == ""
    assert "toolrun.yaml:3" in err and "permissions.allow[0]" in err
    assert "'Bash(git': a rule with content must end with ')'" in err


def test_an_unanchored_allow_glob_is_skipped_with_a_warning_at_file_line(
    runner: CliRunner, ws: Path
) -> None:
    """Issue 9: Claude Code skips it with a warning; it used to reject the whole config."""
    (ws / "toolrun.yaml").write_text('permissions:\n  allow:\n    - "Read"\n    - "*"\n')
    code, _out, err = run(runner, "Bash", "rm -rf src")
    assert code == 5  # asks: the skipped '*' approves nothing
    assert "toolrun.yaml:4" in err
    assert "skipped in allow rules" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give a call"),
        (("Bash",), "Bash needs its command"),
        (("Bash", "ls", "--call", '{"tool": "Bash"}'), "not both"),
        (("--call", "{nope"), "not valid JSON"),
        (("--call", '["Bash"]'), '{"tool": NAME'),
        (("--call", '{"tool": "Bash", "input": 3}'), "input must be an object"),
        (("Read", "a", "b"), "Read takes file_path"),
        (("Reed", "x.py"), "unknown tool 'Reed' (did you mean Read?)"),
    ],
)
def test_usage_errors(runner: CliRunner, ws: Path, args: tuple[str, ...], message: str) -> None:
    code, out, err = run(runner, *args)
    assert code == 2
    assert out == ""
    assert message in err


def test_mcp_tool_with_json_input(runner: CliRunner, ws: Path) -> None:
    code, out, _ = run(runner, "mcp__github__get_issue", '{"n": 1}', "--format", "json")
    assert code == 5
    assert json.loads(out)["input"] == {"n": 1}


def test_tab_completes_tool_names(runner: CliRunner) -> None:
    result = runner.invoke(
        main,
        [],
        env={
            "_TOOLRUN_COMPLETE": "bash_complete",
            "COMP_WORDS": "toolrun explain-permission Ba",
            "COMP_CWORD": "2",
        },
        prog_name="toolrun",
    )
    assert result.stdout.split() == ["plain,Bash"]
    result = runner.invoke(
        main,
        [],
        env={
            "_TOOLRUN_COMPLETE": "bash_complete",
            "COMP_WORDS": "toolrun explain-permission ",
            "COMP_CWORD": "2",
        },
        prog_name="toolrun",
    )
    assert [w.split(",")[1] for w in result.stdout.split()] == list(TOOL_NAMES)


def test_tool_names_match_the_engine() -> None:
    from toolrun.permissions import BUILTIN_TOOLS

    assert set(TOOL_NAMES) <= set(BUILTIN_TOOLS)


def test_help(runner: CliRunner) -> None:
    result = runner.invoke(main, ["explain-permission", "--help"])
    assert result.exit_code == 0
    assert "Bash(git push origin main)" in result.stdout
    assert "0 allow, 4 deny, 5 ask" in result.stdout


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["Bash", "git", "push", "--force"], "git push --force"),
        (["Bash", "git", "push", "-f", "origin"], "git push -f origin"),
        (["Bash", "rm", "-rf", "build", "--no-preserve-root"], "rm -rf build --no-preserve-root"),
        (["--", "Bash", "ls", "--format", "json"], "ls --format json"),
        (["Bash", "git", "push", "--force-with-lease=main"], "git push --force-with-lease=main"),
    ],
)
def test_a_commands_options_after_the_tool_are_the_calls(
    ws: Path, argv: list[str], command: str
) -> None:
    run = CliRunner().invoke(main, ["explain-permission", *argv])
    assert run.exit_code in (0, 4, 5), run.output
    assert run.stdout.startswith(f"call:       Bash({command})\n")


def test_our_own_options_still_count_after_the_call(ws: Path) -> None:
    run = CliRunner().invoke(
        main, ["explain-permission", "Bash", "git", "push", "--format", "json"]
    )
    answer = json.loads(run.stdout)
    assert answer["input"] == {"command": "git push"} and answer["decision"] == "ask"
    bad = CliRunner().invoke(main, ["explain-permission", "--bogus", "Bash", "ls"])
    assert bad.exit_code == 2 and "No such option '--bogus'" in bad.stderr


@pytest.mark.parametrize(
    ("argv", "suggested"),
    [
        (["git push"], "Bash 'git push'"),
        (["git", "push", "--force"], "Bash 'git push --force'"),
        (["ls"], "Bash ls"),
        (["./build.sh", "--all"], "Bash './build.sh --all'"),
    ],
)
def test_a_shell_command_given_as_the_tool_gets_a_hint(
    ws: Path, argv: list[str], suggested: str
) -> None:
    run = CliRunner().invoke(main, ["explain-permission", *argv])
    assert run.exit_code == 2
    assert f"to explain a shell command, write toolrun explain-permission {suggested}" in (
        run.stderr
    )


def test_the_help_says_how_to_pass_a_commands_options() -> None:
    help_text = CliRunner().invoke(main, ["explain-permission", "--help"]).stdout
    assert "toolrun explain-permission Bash git push --force" in help_text
    assert "after --" in help_text
