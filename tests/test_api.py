"""The Python API: toolrun.decide / check / run return what the CLI renders, and
`import toolrun` stays light."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolrun
from tests.hook.conftest import CLAUDE_SETTINGS, ROOT, TOOLRUN_YAML
from tests.hook.test_claude import CASES
from toolrun.errors import ConfigError

DOC = ROOT / "docs" / "api.md"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("old = 1\n")
    (ws / "config").mkdir()
    (ws / ".env").write_text("TOKEN=1\n")
    (ws / "toolrun.yaml").write_text(TOOLRUN_YAML)
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps(CLAUDE_SETTINGS, indent=2) + "\n")
    monkeypatch.chdir(ws)  # sources are shown relative to it, as the hook shows them
    return ws


@pytest.mark.parametrize(
    ("tool", "tool_input", "answered", "reason"), CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                              enumerate(CASES)]
)
def test_decide_agrees_with_the_hook(
    ws: Path, tool: str, tool_input: dict[str, Any], answered: str | None, reason: str
) -> None:
    given = {k: v.replace("{ws}", str(ws)) if isinstance(v, str) else v
             for k, v in tool_input.items()}
    decision = toolrun.decide({"tool": tool, "input": given}, workspace=ws)
    if tool == "AskUserQuestion":  # the engine asks; the hook leaves it to Claude Code
        assert decision.decision == "ask"
    elif answered is None:  # the hook leaves toolrun's own allows to the agent
        assert decision.decision == "allow" and decision.decided_by.kind != "rule"
    else:
        assert (decision.decision, decision.reason) == (answered, reason.replace("{ws}", str(ws)))
    # the other spellings of a call are the same call
    assert toolrun.decide((tool, given), workspace=ws) == decision
    assert toolrun.decide({"type": "tool_use", "name": tool, "input": given},
                          workspace=ws) == decision


def test_decide_takes_a_mode_a_cwd_and_a_config(ws: Path, tmp_path: Path) -> None:
    edit = {"tool": "Edit", "input": {"file_path": f"{ws}/src/app.py", "old_string": "o",
                                      "new_string": "n"}}
    assert toolrun.decide(edit, workspace=ws).decision == "ask"
    assert toolrun.decide(edit, workspace=ws, mode="acceptEdits").decision == "allow"
    assert toolrun.decide(edit, workspace=ws, mode="plan").decision == "deny"
    cat = {"tool": "Bash", "input": {"command": "cat ../.env"}}
    assert toolrun.decide(cat, workspace=ws, cwd=ws / "src").decision == "deny"
    other = tmp_path / "other.yaml"
    other.write_text('permissions:\n  deny: ["Edit"]\n')
    assert toolrun.decide(edit, workspace=ws, config=other).reason.startswith(
        "denied: deny rule Edit ("
    )
    from toolrun.config import load_config

    config = load_config(workspace=ws, config_file=other)
    assert toolrun.decide(edit, workspace=ws, config=config).decision == "deny"
    with pytest.raises(ValueError, match="not for the workspace"):
        toolrun.decide(edit, workspace=tmp_path, config=config)


def test_decide_reads_an_edited_config_and_names_a_broken_one(ws: Path) -> None:
    call = ("Bash", {"command": "npm test"})
    assert toolrun.decide(call, workspace=ws).decision == "allow"
    (ws / "toolrun.yaml").write_text('permissions:\n  deny: ["Bash(npm *)"]\n')
    assert toolrun.decide(call, workspace=ws).reason == (
        "denied: deny rule Bash(npm *) (toolrun.yaml:2) matches `npm test`"
    )
    (ws / "toolrun.yaml").write_text("permissions:\n  deny: [\n")
    with pytest.raises(ConfigError) as caught:
        toolrun.decide(call, workspace=ws)
    assert str(caught.value).startswith("toolrun.yaml:3:1: ")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ({"input": {}}, "a call needs its tool name"),
        ({"tool": 3}, "a call needs its tool name"),
        ({"tool": "Bash", "input": "ls"}, "Bash: the input must be a mapping, not str"),
        (("Bash",), "a call tuple is"),
        ("Bash(ls)", "a call is a mapping or a (tool, input) pair, not str"),
    ],
)
def test_what_is_not_a_call_is_a_type_error(ws: Path, call: Any, message: str) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        toolrun.decide(call, workspace=ws)


def test_check_and_run_return_the_reports_the_cli_renders(ws: Path) -> None:
    plan = ws / "plan.yaml"
    plan.write_text(
        "calls:\n"
        "  - {tool: Bash, input: {command: 'echo hi'}}\n"
        "  - {tool: Bash, input: {command: 'rm -rf build'}}\n"
    )
    report = toolrun.check(plan, workspace=ws)
    assert report.counts()["deny"] == 1 and int(report.exit_code) == 4
    ((_, failing),) = list(report.failing())
    assert failing.rule == "Bash(rm *)" and failing.line == 3
    seen: list[str] = []
    ran = toolrun.run(str(plan), workspace=ws, on_result=lambda r: seen.append(r.status))
    assert [(r.status, r.output) for r in ran.all_results] == [("ok", "hi\n"), ("denied", "")]
    assert seen == ["ok", "denied"] and int(ran.exit_code) == 4
    assert ran.journal_path is not None and ran.journal_path.is_file()


def test_import_toolrun_stays_light() -> None:
    code = (
        "import sys, toolrun\n"
        "heavy = ('pydantic', 'yaml', 'anyio', 'click', 'tree_sitter', 'toolrun.api',"
        " 'toolrun.permissions.resolver', 'toolrun.config')\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "toolrun.decide\n"
        "print('toolrun.api' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.stdout.splitlines() == ["[]", "True"]


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


def test_the_documented_agent_loop_runs(tmp_path: Path) -> None:
    """The example in docs/api.md, run as it is written, prints what it says."""
    text = DOC.read_text()
    loop = text[text.index("## A minimal agent loop"):]
    (code, *_), (yaml, *_) = _blocks(loop, "python"), _blocks(loop, "yaml")
    expected = _blocks(loop[loop.index("it prints:"):], "")[0]
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "toolrun.yaml").write_text(yaml)
    (ws / ".env").write_text("TOKEN=secret\n")
    (ws / "build").mkdir()
    (ws / "agent.py").write_text(code)
    done = subprocess.run(
        [sys.executable, "agent.py"], cwd=ws, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.replace(str(ws), "/…") == expected
    assert (ws / "build").is_dir()  # the denied rm never ran
