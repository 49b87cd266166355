"""Where each Bash call runs, said by ``check``, ``exec --dry-run`` and ``exec`` (#25).

Each case is run for real: ``check`` and ``exec --dry-run`` through the CLI (stdout and
stderr apart), ``exec`` as a real toolrun process whose Bash calls run in bubblewrap's
jail or sandbox. "No jail can be made" is made real twice: a ``sandbox.bwrapPath`` that
names a script that exits 1 (the probe sees bubblewrap fail), and a PATH without bwrap.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner, Result

from toolrun.cli import main
from toolrun.execution.jailing import JailKeeper
from toolrun.execution.results import CallDecision, DecidedBy

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

READ_ONLY_WHY = "allowed on toolrun's judgement (the read-only set)"
WORKSPACE_WHY = "allowed on toolrun's judgement (acceptEdits' workspace commands)"
RULE_WHY = "allowed by a rule: runs as configured"
NOT_ON_PATH = (
    "bubblewrap (bwrap) is not installed on PATH: install bubblewrap (apt-get install bubblewrap)"
)
FAILING_BWRAP = (
    "bubblewrap cannot create namespaces here (exit 1); allow unprivileged user namespaces "
    "(sysctl kernel.unprivileged_userns_clone=1) or run where they exist"
)
#: a result record's keys, in order (design §6 plus where the call ran)
RESULT_KEYS = [
    "index", "id", "execution_id", "run_id", "plan", "tool", "input", "decision",
    "decided_by", "runs_in", "runs_in_why", "status", "output", "error", "started_at",
    "finished_at", "wait_ms", "duration_ms", "attempts", "aborted_before_launch", "location",
]  # fmt: skip
#: whether this toolrun makes workspace jails (acceptEdits' judged writes) at all
WORKSPACE_JAILS = (
    JailKeeper([], None).kind(
        SimpleNamespace(tool="Bash"),  # type: ignore[arg-type]
        CallDecision("allow", "", DecidedBy("mode"), jail="workspace"),
    )
    is not None
)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("print(1)\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def plan(ws: Path, command: str) -> None:
    (ws / "plan.yaml").write_text(
        f"calls:\n  - {{id: c, tool: Bash, input: {{command: {json.dumps(command)}}}}}\n"
    )


def said(stderr: str) -> list[str]:
    """What stderr says besides the config sources every deciding command names."""
    return [line for line in stderr.splitlines() if not line.startswith("sources: ")]


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def check_json(*args: str) -> dict[str, Any]:
    done = cli("check", "plan.yaml", "--format", "json", *args)
    assert done.exit_code == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def check_line(*args: str) -> str:
    done = cli("check", "plan.yaml", "--format", "text", *args)
    assert done.exit_code == 0, done.stderr
    assert said(done.stderr) == []
    return done.stdout.splitlines()[1]


def dry_run(*args: str) -> dict[str, Any]:
    done = cli("exec", "--dry-run", "--format", "json", "plan.yaml", *args)
    assert done.exit_code == 0, done.stderr
    assert said(done.stderr) == []  # a dry run warns of nothing: its records say it
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def exec_real(
    ws: Path, *args: str, env: dict[str, str] | None = None, code: int = 0
) -> tuple[dict[str, Any], str]:
    """``toolrun exec --format json plan.yaml`` as a real process (exiting ``code``): its
    report, its stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "--format", "json", "plan.yaml", *args],
        cwd=ws, capture_output=True, text=True, timeout=120, check=False,
        env=env if env is not None else dict(os.environ),
    )  # fmt: skip
    assert done.returncode == code, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report, done.stderr


def journal(ws: Path) -> list[dict[str, Any]]:
    (path,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def where(record: dict[str, Any]) -> tuple[Any, Any]:
    return record["runs_in"], record["runs_in_why"]


# -- a read-only command: the read-only jail ----------------------------------------------


def test_a_read_only_command_runs_in_the_read_only_jail_everywhere(ws: Path) -> None:
    plan(ws, "cat src/a.py")
    assert check_line() == (
        "plan.yaml:2:5: allow c Bash(cat src/a.py) · turn 1 · run 1 concurrent · "
        "read-only jail — allowed: `cat src/a.py`: cat is in the read-only set"
    )
    report = check_json()
    (record,) = report["results"]
    assert where(record) == ("read-only jail", READ_ONLY_WHY)
    assert list(record)[: len(RESULT_KEYS)] == RESULT_KEYS
    assert (report["summary"]["enforced"], report["summary"]["enforced_reason"]) == (True, None)
    dry = dry_run()
    assert where(dry["results"][0]) == ("read-only jail", READ_ONLY_WHY)
    assert (dry["summary"]["enforced"], dry["summary"]["enforced_reason"]) == (True, None)

    ran, stderr = exec_real(ws)
    assert said(stderr) == []  # (json: no journal line) and no warning: the jail was made
    (result,) = ran["results"]
    assert list(result) == [*RESULT_KEYS, "metadata"]
    assert (result["status"], result["output"]) == ("ok", "print(1)\n")
    assert where(result) == ("read-only jail", READ_ONLY_WHY)
    assert result["metadata"]["jail"] == {"kind": "read-only", "enforced": True, "blocked": []}
    assert (ran["summary"]["enforced"], ran["summary"]["enforced_reason"]) == (True, None)
    records = journal(ws)
    (journalled,) = [r for r in records if r["event"] == "result"]
    assert where(journalled) == ("read-only jail", READ_ONLY_WHY)
    end = records[-1]
    assert (end["event"], end["enforced"], end["enforced_reason"]) == ("end", True, None)


def test_show_says_where_a_call_ran_and_what_the_run_enforced(ws: Path) -> None:
    plan(ws, "cat src/a.py")
    exec_real(ws)
    shown = cli("show", "last")
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.splitlines()[1] == (
        "enforced: true — the calls allowed on toolrun's judgement ran in jails"
    )
    call = cli("show", "last", "c")
    assert call.exit_code == 0, call.stderr
    assert f"runs in:   read-only jail — {READ_ONLY_WHY}" in call.stdout.splitlines()


def test_a_write_in_the_read_only_jail_is_blocked_and_the_result_says_where(ws: Path) -> None:
    # (a read-only verdict, enforced: the engine judges every allowed call read-only here)
    plan(ws, "touch src/new.txt")
    env = {**os.environ, "TOOLRUN_TEST_JUDGE_ALL": "read-only"}
    ran, _ = exec_real(ws, "--ask", "allow", env=env, code=1)  # the write failed
    (result,) = ran["results"]
    assert result["status"] == "error"
    assert not (ws / "src" / "new.txt").exists()
    assert result["runs_in"] == "read-only jail"
    assert result["metadata"]["jail"]["enforced"] is True
    assert ran["summary"]["enforced"] is True


# -- acceptEdits: the workspace jail --------------------------------------------------------


def test_an_accept_edits_workspace_write_says_where_it_runs(ws: Path) -> None:
    plan(ws, "mkdir -p build")
    if WORKSPACE_JAILS:
        place, why, enforced, reason = "workspace jail", WORKSPACE_WHY, True, None
    else:  # the run makes no workspace jail: it runs as configured, and says so
        reason = "toolrun does not make workspace jails"
        place, why, enforced = (
            "unsandboxed",
            f"{WORKSPACE_WHY}, but no jail can be made here: {reason}",
            False,
        )
    assert check_line("--mode", "acceptEdits") == (
        f"plan.yaml:2:5: allow c Bash(mkdir -p build) · turn 1 · run 1 exclusive · {place} — "
        "allowed: `mkdir -p build` changes files in the workspace; acceptEdits mode allows "
        "file edits inside the workspace"
    )
    report = check_json("--mode", "acceptEdits")
    assert where(report["results"][0]) == (place, why)
    assert (report["summary"]["enforced"], report["summary"]["enforced_reason"]) == (
        enforced,
        reason,
    )
    dry = dry_run("--mode", "acceptEdits")
    assert where(dry["results"][0]) == (place, why)
    assert (dry["summary"]["enforced"], dry["summary"]["enforced_reason"]) == (enforced, reason)
    ran, _ = exec_real(ws, "--mode", "acceptEdits")
    (result,) = ran["results"]
    assert result["status"] == "ok" and (ws / "build").is_dir()
    assert where(result) == (place, why)
    assert result["metadata"]["jail"]["enforced"] is enforced
    assert (ran["summary"]["enforced"], ran["summary"]["enforced_reason"]) == (enforced, reason)


# -- a rule-allowed call, the user's sandbox, a mixed call ---------------------------------


def test_a_rule_allowed_call_runs_as_configured(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text('permissions:\n  allow: ["Bash(touch made.txt)"]\n')
    plan(ws, "touch made.txt")
    assert check_line() == (
        "plan.yaml:2:5: allow c Bash(touch made.txt) · turn 1 · run 1 exclusive · unsandboxed — "
        "allowed: allow rule Bash(touch made.txt) (toolrun.yaml:2) matches `touch made.txt`"
    )
    report = check_json()
    assert where(report["results"][0]) == ("unsandboxed", RULE_WHY)
    # no call stands on toolrun's judgement: nothing to claim
    assert (report["summary"]["enforced"], report["summary"]["enforced_reason"]) == (None, None)
    ran, _ = exec_real(ws)
    (result,) = ran["results"]
    assert result["status"] == "ok" and (ws / "made.txt").exists()
    assert where(result) == ("unsandboxed", RULE_WHY)
    assert "jail" not in result.get("metadata", {})
    assert ran["summary"]["enforced"] is None
    assert journal(ws)[-1]["enforced"] is None


def test_a_rule_allowed_call_in_the_users_sandbox_runs_in_the_sandbox(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(
        'permissions:\n  allow: ["Bash(touch made.txt)"]\nsandbox:\n  enabled: true\n'
    )
    plan(ws, "touch made.txt")
    assert where(check_json()["results"][0]) == ("sandbox", RULE_WHY)
    assert where(dry_run()["results"][0]) == ("sandbox", RULE_WHY)
    ran, _ = exec_real(ws)
    (result,) = ran["results"]
    assert result["status"] == "ok" and (ws / "made.txt").exists()
    assert where(result) == ("sandbox", RULE_WHY)
    assert result["metadata"]["sandbox"]["sandboxed"] is True


def test_a_mixed_call_runs_as_configured_and_says_its_judged_part_is_not_enforced(
    ws: Path,
) -> None:
    (ws / "toolrun.yaml").write_text('permissions:\n  allow: ["Bash(touch made.txt)"]\n')
    plan(ws, "touch made.txt && cat src/a.py")
    why = (
        "`touch made.txt` is allowed by a rule, so the call runs as configured; its other "
        "parts are not enforced"
    )
    assert check_line() == (
        "plan.yaml:2:5: allow c Bash(touch made.txt && cat src/a.py) · turn 1 · run 1 "
        "exclusive · unsandboxed — allowed: every sub-command is allowed; allow rule "
        "Bash(touch made.txt) (toolrun.yaml:2) matches `touch made.txt`"
    )
    report = check_json()
    assert where(report["results"][0]) == ("unsandboxed", why)
    ran, _ = exec_real(ws)
    (result,) = ran["results"]
    assert (result["status"], result["output"]) == ("ok", "print(1)\n")
    assert where(result) == ("unsandboxed", why)
    assert ran["summary"]["enforced"] is None


# -- no jail can be made -------------------------------------------------------------------


def _failing_bwrap(ws: Path) -> None:
    """The user's sandbox, its bubblewrap a script that exits 1 (allowed to run unsandboxed)."""
    script = ws / "not-bwrap"
    script.write_text("#!/bin/sh\nexit 1\n")
    script.chmod(0o755)
    (ws / "toolrun.yaml").write_text(
        f"sandbox:\n  enabled: true\n  failIfUnavailable: false\n  bwrapPath: {script}\n"
    )


def test_where_bubblewrap_fails_a_judged_call_says_it_runs_unjailed(ws: Path) -> None:
    _failing_bwrap(ws)
    plan(ws, "cat src/a.py")
    why = f"{READ_ONLY_WHY}, but no jail can be made here: {FAILING_BWRAP}"
    assert check_line() == (
        "plan.yaml:2:5: allow c Bash(cat src/a.py) · turn 1 · run 1 concurrent · "
        f"unsandboxed — allowed: `cat src/a.py`: cat is in the read-only set [sandbox: runs "
        f"unsandboxed, with a warning: {FAILING_BWRAP}]"
    )
    report = check_json()
    assert where(report["results"][0]) == ("unsandboxed", why)
    assert (report["summary"]["enforced"], report["summary"]["enforced_reason"]) == (
        False, FAILING_BWRAP,
    )  # fmt: skip
    dry = dry_run()
    assert where(dry["results"][0]) == ("unsandboxed", why)
    assert dry["results"][0]["metadata"]["jail"] == {
        "kind": "read-only", "enforced": False, "reason": FAILING_BWRAP,
    }  # fmt: skip
    assert (dry["summary"]["enforced"], dry["summary"]["enforced_reason"]) == (False, FAILING_BWRAP)

    ran, stderr = exec_real(ws)
    (result,) = ran["results"]
    assert result["status"] == "ok"
    assert where(result) == ("unsandboxed", why)
    assert result["metadata"]["jail"] == {
        "kind": "read-only", "enforced": False, "reason": FAILING_BWRAP,
    }  # fmt: skip
    assert (ran["summary"]["enforced"], ran["summary"]["enforced_reason"]) == (False, FAILING_BWRAP)
    warning = (
        f"toolrun: warning: judged and bypass calls run unjailed (enforced: false): {FAILING_BWRAP}"
    )
    assert stderr.splitlines().count(warning) == 1
    end = journal(ws)[-1]
    assert (end["event"], end["enforced"], end["enforced_reason"]) == ("end", False, FAILING_BWRAP)
    shown = cli("show", "last")
    assert shown.stdout.splitlines()[1] == (
        f"enforced: false — the calls allowed on toolrun's judgement ran unjailed: {FAILING_BWRAP}"
    )


def test_without_bwrap_on_path_every_judged_call_runs_unjailed_said_once(
    ws: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # a PATH that has what the commands need and no bwrap
    bin_dir = tmp_path_factory.mktemp("bin")
    for name in ("bash", "sh", "cat", "ls", "env", "head"):
        found = shutil.which(name)
        assert found is not None
        (bin_dir / name).symlink_to(found)
    (ws / "plan.yaml").write_text(
        "calls:\n"
        "  - {id: one, tool: Bash, input: {command: cat src/a.py}}\n"
        "  - {id: two, tool: Bash, input: {command: ls src}}\n"
        "  - {id: three, tool: Bash, input: {command: head -1 src/a.py}}\n"
    )
    why = f"{READ_ONLY_WHY}, but no jail can be made here: {NOT_ON_PATH}"
    env = {**os.environ, "PATH": str(bin_dir)}
    ran, stderr = exec_real(ws, env=env)
    assert [r["status"] for r in ran["results"]] == ["ok", "ok", "ok"]
    assert [where(r) for r in ran["results"]] == [("unsandboxed", why)] * 3
    assert (ran["summary"]["enforced"], ran["summary"]["enforced_reason"]) == (False, NOT_ON_PATH)
    warning = (
        f"toolrun: warning: judged and bypass calls run unjailed (enforced: false): {NOT_ON_PATH}"
    )
    assert [line for line in stderr.splitlines() if "warning" in line] == [warning]
    checked = subprocess.run(
        [sys.executable, "-m", "toolrun", "check", "plan.yaml", "--format", "json"],
        cwd=ws, capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    assert [where(r) for r in report["results"]] == [("unsandboxed", why)] * 3
    assert report["summary"]["enforced"] is False


def test_a_run_without_a_judged_call_makes_no_claim(ws: Path) -> None:
    (ws / "plan.yaml").write_text("calls:\n  - {id: r, tool: Read, input: {file_path: src/a.py}}\n")
    ran, _ = exec_real(ws)
    (result,) = ran["results"]
    assert where(result) == (None, None)
    assert (ran["summary"]["enforced"], ran["summary"]["enforced_reason"]) == (None, None)
    end = journal(ws)[-1]
    assert (end["enforced"], end["enforced_reason"]) == (None, None)
    shown = cli("show", "last")
    assert not any(line.startswith("enforced:") for line in shown.stdout.splitlines())


@pytest.mark.parametrize(("sandboxed", "place"), [(False, "unsandboxed"), (True, "sandbox")])
def test_a_call_approved_by_ask_allow_runs_as_configured(
    ws: Path, sandboxed: bool, place: str
) -> None:
    config = 'permissions:\n  ask: ["Bash(touch made.txt)"]\n'
    if sandboxed:
        config += "sandbox:\n  enabled: true\n  autoAllowBashIfSandboxed: false\n"
    (ws / "toolrun.yaml").write_text(config)
    plan(ws, "touch made.txt")
    assert where(check_json()["results"][0]) == (place, "if approved: runs as configured")
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "--format", "jsonl", "--ask", "allow",
         "plan.yaml"],
        cwd=ws, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    record = json.loads(line)
    assert record["status"] == "ok" and (ws / "made.txt").exists()
    assert where(record) == (place, "approved by --ask allow: runs as configured")
    (journalled,) = [r for r in journal(ws) if r["event"] == "result"]
    assert where(journalled) == where(record)


@pytest.mark.parametrize(
    ("command", "mode", "kind_why"),
    [
        ("cat src/a.py", "default", READ_ONLY_WHY),
        ("git status", "default", READ_ONLY_WHY),
        ("ls src | head -1", "default", READ_ONLY_WHY),
        ("mkdir build", "acceptEdits", WORKSPACE_WHY),
    ],
)
def test_explain_permission_says_no_jail_where_none_can_be_made(
    ws: Path, command: str, mode: str, kind_why: str
) -> None:
    # check and exec said "unsandboxed ... no jail can be made here"; explain-permission
    # still claimed the jail under enforce: auto
    if mode == "acceptEdits" and not WORKSPACE_JAILS:
        pytest.skip("this toolrun makes no workspace jails")
    _failing_bwrap(ws)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    done = cli("explain-permission", "--mode", mode, "--format", "json", "Bash", command)
    answer = json.loads(done.stdout)
    assert answer["decision"] == "allow", answer["reason"]
    assert (answer["runs_in"], answer["runs_in_why"]) == (
        "unsandboxed", f"{kind_why}, but no jail can be made here: {FAILING_BWRAP}",
    )  # fmt: skip
    text = cli("explain-permission", "--mode", mode, "Bash", command).stdout
    assert f"runs in:    unsandboxed — {kind_why}, but no jail" in text


def test_explain_permission_names_the_jail_where_one_can_be_made(ws: Path) -> None:
    done = cli("explain-permission", "--format", "json", "Bash", "cat src/a.py")
    answer = json.loads(done.stdout)
    assert (answer["runs_in"], answer["runs_in_why"]) == ("read-only jail", READ_ONLY_WHY)
