"""Matchers, the ``if`` pre-filter and de-duplication (no processes run here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hooks.conftest import Hooks
from toolrun.hooks import IfFilter, compile_matcher, matcher_matches, matcher_problems, select_hooks


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        ("", "Bash", True),
        ("*", "mcp__srv__tool", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),
        ("bash", "Bash", False),
        ("Edit|Write", "Write", True),
        ("Edit|Write", "MultiEdit", False),
        ("Edit, Write", "Edit", True),
        ("Edit , Write", "Write", True),
        ("my-tool|other", "my-tool", True),
        ("mcp__lab", "mcp__lab__search", False),  # exact, not a prefix
        ("mcp__lab__.*", "mcp__lab__search", True),
        ("Edit.*", "NotebookEdit", True),  # regexes are unanchored
        ("^Edit$", "NotebookEdit", False),
        ("^Edit$", "Edit", True),
        ("Notebook", "NotebookEdit", False),
        ("Web(Fetch|Search)", "WebSearch", True),
        ("(", "(", False),  # invalid regex: never matches
    ],
)
def test_matcher_rules(matcher: str, tool: str, expected: bool) -> None:
    assert matcher_matches(matcher, tool) is expected


def test_matcher_kinds() -> None:
    assert compile_matcher("").kind == "all"
    assert compile_matcher("*").kind == "all"
    assert compile_matcher("Read|Grep").names == frozenset({"Read", "Grep"})
    assert compile_matcher("Read.*").kind == "regex"
    invalid = compile_matcher("Bash(")
    assert invalid.kind == "invalid" and invalid.error


def test_invalid_regex_is_reported(hooks: Hooks) -> None:
    hooks.add("PreToolUse", "Bash(", "true")
    config = hooks.config()
    (problem,) = matcher_problems(config)
    assert f"{hooks.file}:10" in problem and "'Bash('" in problem and "never matches" in problem
    selection = select_hooks(config, "PreToolUse", "Bash", {"command": "ls"})
    assert selection.hooks == () and selection.problems == (problem,)


def test_selection_keeps_config_order_and_event(hooks: Hooks) -> None:
    hooks.add("PreToolUse", "Read", "a")
    hooks.add("PostToolUse", "*", "post")
    hooks.add("PreToolUse", "*", "b", "c")
    hooks.add("PreToolUse", "Edit", "d")
    selection = select_hooks(hooks.config(), "PreToolUse", "Read", {"file_path": "x"})
    assert [s.hook.command for s in selection.hooks] == ["a", "b", "c"]
    assert [s.position for s in selection.hooks] == [0, 1, 2]
    assert [s.group for s in selection.hooks] == [0, 1, 1]


def test_duplicates_keep_the_first_occurrence(hooks: Hooks) -> None:
    hooks.add("PreToolUse", "Bash", "guard")
    hooks.add("PreToolUse", "", "guard", "other")
    selection = select_hooks(hooks.config(), "PreToolUse", "Bash", {"command": "ls"})
    assert [(s.hook.command, s.source) for s in selection.hooks] == [
        ("guard", f"{hooks.file}:11"),
        ("other", f"{hooks.file}:14"),
    ]
    (skipped,) = selection.skipped
    assert skipped.source == f"{hooks.file}:13"
    assert skipped.reason == f"the same command already runs from {hooks.file}:11"


def test_post_tool_batch_ignores_matchers(hooks: Hooks) -> None:
    hooks.add("PostToolBatch", "NoSuchTool", "batch")
    hooks.add("PostToolBatch", "(", "also")
    selection = select_hooks(hooks.config(), "PostToolBatch", None)
    assert [s.hook.command for s in selection.hooks] == ["batch", "also"]


@pytest.fixture
def if_filter(ws: Path) -> IfFilter:
    from toolrun.config.models import Config

    return IfFilter(Config(workspace=ws))


@pytest.mark.parametrize(
    ("rule", "tool", "tool_input", "runs"),
    [
        ("Bash(git *)", "Bash", {"command": "git push"}, True),
        ("Bash(git *)", "Bash", {"command": "cd x && git push"}, True),
        ("Bash(git *)", "Bash", {"command": "ls | grep y; git status"}, True),
        ("Bash(git *)", "Bash", {"command": "FOO=1 git push"}, True),
        ("Bash(git *)", "Bash", {"command": "echo $(git rev-parse HEAD)"}, True),
        ("Bash(git *)", "Bash", {"command": "timeout 5 git fetch"}, True),
        ("Bash(git *)", "Bash", {"command": "ls -la"}, False),
        ("Bash(git *)", "Bash", {"command": "gitk"}, False),
        ("Bash(git *)", "Read", {"file_path": "a"}, False),
        ("Bash(git push *)", "Bash", {"command": "git pull"}, False),
        # the engine cannot analyse these: the hook runs anyway (fails open)
        ("Bash(git *)", "Bash", {"command": "eval \"$CMD\""}, True),
        ("Bash(git *)", "Bash", {"command": "ls ((("}, True),
        ("Edit(src/**)", "Write", {"file_path": "src/a/b.py", "content": ""}, True),
        ("Edit(src/**)", "Write", {"file_path": "docs/a.md", "content": ""}, False),
        ("Read(*.env)", "Read", {"file_path": "config/.env"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://example.com/x"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://other.org/"}, False),
        ("mcp__srv", "mcp__srv__tool", {}, True),
    ],
)
def test_if_rule(
    if_filter: IfFilter, rule: str, tool: str, tool_input: dict[str, str], runs: bool
) -> None:
    assert if_filter(rule, tool, tool_input, None).run is runs


def test_if_filter_in_selection(hooks: Hooks, ws: Path) -> None:
    hooks.add("PreToolUse", "Bash", ("git-guard", {"if": "Bash(git *)"}), "always")
    config = hooks.config()
    check = IfFilter(config)
    fired = select_hooks(config, "PreToolUse", "Bash", {"command": "cd x && git push"},
                         if_check=check)
    assert [s.hook.command for s in fired.hooks] == ["git-guard", "always"]
    quiet = select_hooks(config, "PreToolUse", "Bash", {"command": "make"}, if_check=check)
    assert [s.hook.command for s in quiet.hooks] == ["always"]
    (skipped,) = quiet.skipped
    assert skipped.command == "git-guard" and "does not match" in skipped.reason


def test_filtered_occurrence_does_not_count_as_duplicate(hooks: Hooks) -> None:
    hooks.add("PreToolUse", "Bash", ("guard", {"if": "Bash(git *)"}))
    hooks.add("PreToolUse", "Bash", "guard")
    config = hooks.config()
    selection = select_hooks(config, "PreToolUse", "Bash", {"command": "make"},
                             if_check=IfFilter(config))
    assert [s.source for s in selection.hooks] == [f"{hooks.file}:13"]


def test_if_rule_uses_the_call_cwd(if_filter: IfFilter, ws: Path) -> None:
    (ws / "src").mkdir()
    tool_input = {"command": "touch a.py"}
    assert if_filter("Edit(src/**)", "Bash", tool_input, ws / "src").run is True
    assert if_filter("Edit(src/**)", "Bash", tool_input, ws).run is False


def test_unusable_if_rule_fails_open(if_filter: IfFilter) -> None:
    verdict = if_filter("Read(", "Read", {"file_path": "a"}, None)
    assert verdict.run is True
