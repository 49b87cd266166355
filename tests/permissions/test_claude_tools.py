"""Claude Code's own tools (named by transcripts, never run by toolrun), decided as Claude
Code's tools reference says: no permission, a rule by name, or their paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.config import load_config
from toolrun.permissions import PermissionEngine
from toolrun.tools import default_registry

TODOS = {"todos": [{"content": "x", "status": "pending", "activeForm": "x"}]}


def engine(ws: Path, config: str = "", mode: str | None = None) -> PermissionEngine:
    (ws / "toolrun.yaml").write_text(config)
    return PermissionEngine(load_config(workspace=ws, env={}, mode=mode), default_registry())


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("TodoWrite", TODOS),
        ("Agent", {"description": "d", "prompt": "p", "subagent_type": "Explore"}),
        ("Task", {"description": "d", "prompt": "p"}),  # the legacy name of Agent
        ("TaskOutput", {"task_id": "1"}),
        ("BashOutput", {"bash_id": "1"}),  # legacy TaskOutput
        ("KillShell", {"shell_id": "1"}),  # legacy TaskStop
        ("EnterPlanMode", {}),
        ("ToolSearch", {"query": "x"}),
    ],
)
@pytest.mark.parametrize("mode", [None, "dontAsk", "plan"])
def test_tools_that_need_no_permission_are_allowed(
    tmp_path: Path, tool: str, tool_input: dict[str, object], mode: str | None
) -> None:
    decision = engine(tmp_path, mode=mode).decide(tool, tool_input)
    assert decision.decision == "allow", decision.reason
    assert "needs no permission" in decision.reason


def test_deny_and_ask_rules_still_apply_and_legacy_names_are_the_new_ones(tmp_path: Path) -> None:
    eng = engine(tmp_path, 'permissions:\n  deny: ["Agent"]\n  ask: ["TodoWrite"]\n')
    assert eng.decide("Task", {"prompt": "p"}).decision == "deny"
    assert eng.decide("Agent", {"prompt": "p"}).decision == "deny"
    assert eng.decide("TodoWrite", TODOS).decision == "ask"
    legacy = engine(tmp_path, 'permissions:\n  deny: ["Task", "KillShell"]\n')
    assert legacy.decide("Agent", {"prompt": "p"}).decision == "deny"  # a legacy rule too
    assert legacy.decide("Task", {"prompt": "p"}).decision == "deny"
    assert legacy.decide("TaskStop", {"task_id": "1"}).decision == "deny"
    eng = engine(tmp_path, 'permissions:\n  deny: ["Agent(subagent_type:Explore)"]\n')
    assert eng.decide("Task", {"prompt": "p", "subagent_type": "Explore"}).decision == "deny"
    assert eng.decide("Task", {"prompt": "p", "subagent_type": "Plan"}).decision == "allow"


@pytest.mark.parametrize(
    "tool", ["todowrite", "Todowrite", "TodoWrite ", "mcp__evil__TodoWrite", "Taskx", "FooBar"]
)
def test_other_names_are_not_mistaken_for_them(tmp_path: Path, tool: str) -> None:
    assert engine(tmp_path).decide(tool, TODOS).decision == "ask"


def test_web_search_is_decided_by_name_like_web_fetch_without_a_url(tmp_path: Path) -> None:
    assert engine(tmp_path).decide("WebSearch", {"query": "x"}).decision == "ask"
    eng = engine(tmp_path, 'permissions:\n  allow: ["WebFetch", "WebFetch(domain:*)"]\n')
    assert eng.decide("WebSearch", {"query": "x"}).decision == "ask"
    assert engine(tmp_path, 'permissions:\n  allow: ["WebSearch"]\n').decide(
        "WebSearch", {"query": "x"}
    ).decision == "allow"
    assert engine(tmp_path, "permissions:\n  defaultMode: dontAsk\n").decide(
        "WebSearch", {"query": "x"}
    ).decision == "deny"


def test_ask_user_question_waits_for_the_user(tmp_path: Path) -> None:
    question = {"questions": [{"question": "Which?", "options": []}]}
    assert engine(tmp_path).decide("AskUserQuestion", question).decision == "ask"
    assert engine(tmp_path, mode="dontAsk").decide("AskUserQuestion", question).decision == "deny"


def test_notebook_read_is_a_read_of_its_notebook_path(tmp_path: Path) -> None:
    eng = engine(tmp_path, 'permissions:\n  deny: ["Read(./secret.ipynb)"]\n')
    assert eng.decide("NotebookRead", {"notebook_path": str(tmp_path / "a.ipynb")}).decision == "allow"
    assert eng.decide("NotebookRead", {"notebook_path": "/etc/x.ipynb"}).decision == "ask"
    assert eng.decide("NotebookRead", {"notebook_path": str(tmp_path / "secret.ipynb")}).decision == "deny"
    assert eng.decide("NotebookRead", {}).decision == "ask"  # no path: cannot be decided


def test_notebook_edit_is_an_edit_of_its_notebook_path(tmp_path: Path) -> None:
    eng = engine(tmp_path, 'permissions:\n  allow: ["Edit(src/**)"]\n')
    (tmp_path / "src").mkdir()
    inside = {"notebook_path": str(tmp_path / "src" / "a.ipynb"), "new_source": "x"}
    assert eng.decide("NotebookEdit", inside).decision == "allow"
    assert eng.decide("NotebookEdit", {"notebook_path": "/tmp/b.ipynb", "new_source": "x"}).decision == "ask"
