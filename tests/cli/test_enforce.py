"""``toolrun.enforce`` and ``--enforce`` (#25): where no jail can be made, ``required``
makes a call allowed on toolrun's own judgement ask; ``check``, ``explain-permission``
and ``exec`` say where a call runs.

No jail can be made is simulated with ``sandbox.bwrapPath`` naming a missing program:
the availability check toolrun's jails and sandbox share honours it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from toolrun.cli import main

NO_BWRAP = "sandbox:\n  bwrapPath: /nonexistent/bwrap\n"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("print(1)\n")
    (tmp_path / "plan.yaml").write_text(
        "calls:\n  - {id: look, tool: Bash, input: {command: cat src/a.py}}\n"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_explain_says_a_judged_call_runs_in_the_read_only_jail(ws: Path) -> None:
    done = run("explain-permission", "--format", "json", "Bash", "cat src/a.py")
    assert done.exit_code == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["jail"] == "read-only"
    assert out["runs_in"] == "read-only jail"
    assert "toolrun's judgement" in out["runs_in_why"]


def test_explain_says_a_rule_allowed_call_runs_as_configured(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text('permissions:\n  allow: ["Bash(npm test)"]\n')
    done = run("explain-permission", "Bash", "npm test")
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "runs in:    unsandboxed — allowed by a rule: runs as configured"
    )


def test_without_a_jail_auto_allows(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(NO_BWRAP)
    done = run("explain-permission", "Bash", "cat src/a.py")
    assert done.exit_code == 0, done.stderr
    # allowed, and said to run unjailed (it claimed the jail it could not make, #25)
    assert done.stdout.splitlines()[-1] == (
        "runs in:    unsandboxed — allowed on toolrun's judgement (the read-only set), but no "
        "jail can be made here: bubblewrap (bwrap) is not installed at /nonexistent/bwrap: "
        "install bubblewrap (apt-get install bubblewrap)"
    )


def test_required_without_a_jail_makes_a_judged_call_ask(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(NO_BWRAP)
    done = run("explain-permission", "--enforce", "required", "Bash", "cat src/a.py")
    assert done.exit_code == 5, done.stderr  # approval needed
    assert "ASK — needs approval: toolrun.enforce: required" in done.stdout
    assert "runs in:    unsandboxed — if approved: runs as configured" in done.stdout


def test_required_in_the_config_file_works_as_the_flag(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(NO_BWRAP + "toolrun:\n  enforce: required\n")
    done = run("explain-permission", "--format", "json", "Bash", "ls")
    assert done.exit_code == 5
    assert json.loads(done.stdout)["decision"] == "ask"
    # the flag wins over the file
    done = run("explain-permission", "--enforce", "auto", "Bash", "ls")
    assert done.exit_code == 0


def test_required_leaves_a_rule_allowed_call_alone(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(NO_BWRAP + 'permissions:\n  allow: ["Bash(npm test)"]\n')
    done = run("explain-permission", "--enforce", "required", "Bash", "npm test")
    assert done.exit_code == 0


def test_check_with_required_reports_the_ask(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(NO_BWRAP)
    done = run("check", "plan.yaml", "--enforce", "required", "--format", "json")
    assert done.exit_code == 0, done.stderr  # --fail-on deny by default
    calls = json.loads(done.stdout)["results"]
    assert [c["decision"] for c in calls] == ["ask"]
    assert "toolrun.enforce: required" in calls[0]["reason"]
    done = run("check", "plan.yaml", "--enforce", "required", "--fail-on", "ask")
    assert done.exit_code == 5
    done = run("check", "plan.yaml", "--enforce", "required", "--mode", "dontAsk")
    assert done.exit_code == 4  # dontAsk turns the ask into a deny
    done = run("check", "plan.yaml", "--fail-on", "ask")
    assert done.exit_code == 0  # auto: allowed, unjailed here, said


def test_managed_settings_required_is_not_loosened_by_the_flag(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(NO_BWRAP)
    managed = ws / "managed.json"
    managed.write_text('{"toolrun": {"enforce": "required"}}')
    done = run("check", "plan.yaml", "--managed-settings", str(managed), "--enforce", "off",
               "--fail-on", "ask")
    assert done.exit_code == 5


def test_exec_dry_run_with_required_asks(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(NO_BWRAP)
    done = run("exec", "--dry-run", "--enforce", "required", "--format", "jsonl",
               "--no-journal", "plan.yaml")
    assert done.exit_code == 5, done.stderr
    first = json.loads(done.stdout.splitlines()[0])
    assert first["decision"] == "ask"


def test_a_misspelt_enforce_is_a_located_error_with_the_hint(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text("toolrun:\n  enforce: requird\n")
    done = run("explain-permission", "Bash", "ls")
    assert done.exit_code == 3
    assert "toolrun.yaml:2:3: toolrun.enforce:" in done.stderr
    assert "(did you mean 'required'?)" in done.stderr


def test_a_misspelt_flag_value_is_a_usage_error(ws: Path) -> None:
    done = run("check", "plan.yaml", "--enforce", "requird")
    assert done.exit_code == 2
    assert "'requird' is not one of 'auto', 'required', 'off'" in done.stderr


def test_the_cli_choices_are_the_configs() -> None:
    from toolrun.cli.options import ENFORCE as CLI
    from toolrun.config.models import ENFORCE

    assert CLI == ENFORCE
