"""The formats agents write in CI, each read from a fixture in its real shape (issue 26).

Each format is one module the registry lists; each fixture's ``cat .env`` meets the deny
rule ``Read(./.env)`` in a real ``python -m toolrun check`` (exit 4), whatever tool the
agent named it with.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.plan.formats_support import FIXTURES, copy, toolrun, workspace
from toolrun.plan.formats import BY_NAME, FORMATS, REGISTRY
from toolrun.plan.importers import load_input
from toolrun.tools import default_registry


def load(name: str, source_format: str | None = None) -> Any:
    return load_input(FIXTURES / name, default_registry(), display=name,
                      source_format=source_format)


def calls(name: str) -> list[tuple[str, str, dict[str, Any]]]:
    return [(c.id, c.tool, dict(c.input)) for c in load(name).plan.calls]


def test_the_registry_lists_each_format_once_each_its_module() -> None:
    from toolrun.cli.options import INPUT_FORMATS
    from toolrun.plan import importers

    assert FORMATS == INPUT_FORMATS == importers.FORMATS
    assert len(set(FORMATS)) == len(FORMATS)
    modules = [f.module for f in REGISTRY if f.shape != "plan"]
    assert len(set(modules)) == len(modules)  # one module a format
    for fmt in REGISTRY:
        if fmt.shape == "plan":
            continue
        module = importlib.import_module(f"toolrun.plan.formats.{fmt.module}")
        assert callable(module.recognise) and callable(module.load), fmt.name
    # codex and gemini moved in: no second home
    for old in ("toolrun.plan.codex", "toolrun.plan.gemini"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)


# (fixture, its format, the id of its `cat .env` call)
SECRETS = [
    ("codex-exec.jsonl", "codex-exec", "item_1"),
    ("codex-rollout-legacy.jsonl", "codex", "call_Q8kF2mZ"),
    ("claude-stream.jsonl", "claude-stream", "toolu_01Ab2Cd3Ef4Gh5Ij6Kl7Mn8"),
    ("claude-code-v2.0.76.jsonl", "claude-code", "toolu_01Env"),
    ("anthropic-api-tools.json", "anthropic", "toolu_01Bash1"),
    ("openai-responses.json", "openai-responses", "call_local_1"),
    ("gemini-read-many-files.json", "gemini", "read_many_files-1762178539407-7f3e.2"),
    ("chat.jsonl", "chat-jsonl", "toolu_01Chat1"),
]


@pytest.mark.parametrize(("name", "fmt", "secret"), SECRETS)
def test_each_format_is_detected_and_its_env_read_is_denied_in_ci(
    tmp_path: Path, name: str, fmt: str, secret: str
) -> None:
    assert load(name).format == fmt
    ws = workspace(tmp_path)
    copy(ws, name)
    run = toolrun(ws, "check", "--format", "jsonl", name)
    assert run.code == 4, run.stderr
    record = run.by_id()[secret]
    assert record["decision"] == "deny"
    assert record["decided_by"] == {"kind": "rule", "rule": "Read(./.env)", "source": "toolrun.yaml:2"}
    # and --from names the same format, with the same answer
    again = toolrun(ws, "check", "--format", "jsonl", "--from", fmt, name)
    assert (again.code, again.by_id()[secret]["decision"]) == (4, "deny")


def test_codex_exec_events_become_the_calls_codex_made() -> None:
    assert calls("codex-exec.jsonl") == [
        ("item_1", "Bash", {"command": "cat .env"}),  # bash -lc SCRIPT is SCRIPT
        ("item_2", "Bash", {"command": "rg -n 'API_KEY' src"}),  # /bin/bash -lc "..." too
        ("item_3", "Edit", {"file_path": "src/app.py", "old_string": "", "new_string": ""}),
        ("item_3.2", "Write", {"file_path": "src/config.py", "content": ""}),
        ("item_4", "mcp__github__create_issue", {"title": "Rotate the API key"}),
    ]
    # item.started and item.completed of one item are one call; calls in sequence are turns
    assert [t.index for t in load("codex-exec.jsonl").plan.turns] == [0, 1, 2, 3]


def test_the_anthropic_apis_own_tools_become_toolruns() -> None:
    imported = load("anthropic-api-tools.json")
    assert [(i, t, d) for i, t, d in calls("anthropic-api-tools.json")] == [
        ("toolu_01Bash1", "Bash", {"command": "cat .env"}),
        ("toolu_01View1", "Read", {"file_path": "deploy.sh", "offset": 1, "limit": 20}),
        ("toolu_01Edit1", "Edit",
         {"file_path": "deploy.sh", "old_string": '"$KEY"', "new_string": '"$DEPLOY_KEY"'}),
        ("toolu_01Create1", "Write", {"file_path": "docs/deploy.md", "content": "Set DEPLOY_KEY.\n"}),
        ("toolu_01Insert1", "Edit", {"file_path": "deploy.sh", "old_string": "", "new_string": "set -eu\n"}),
        ("srvtoolu_01Search1", "WebSearch", {"query": "push deploy key environment variable"}),
        ("srvtoolu_01Fetch1", "WebFetch", {"url": "https://example.com/push"}),
    ]  # fmt: skip
    (restart,) = imported.warnings  # a restart runs nothing: said, not a call
    assert str(restart).startswith("anthropic-api-tools.json:24:")
    assert "restart" in restart.message


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("bash", {"command": "cat .env"}),  # bash_20250124, as the issue ran it
        ("bash", {"command": "head -c 100 ./.env", "restart": False}),  # bash_20241022
        ("str_replace_based_edit_tool", {"command": "view", "path": ".env"}),  # 20250728
        ("str_replace_editor", {"command": "view", "path": "./.env", "view_range": [1, -1]}),
    ],
)
def test_every_spelling_of_the_apis_tools_reading_the_env_file_is_denied(
    tmp_path: Path, name: str, tool_input: dict[str, Any]
) -> None:
    ws = workspace(tmp_path)
    conversation = {"messages": [
        {"role": "user", "content": "show me the key"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": name, "input": tool_input}]},
    ]}  # fmt: skip
    (ws / "c.json").write_text(json.dumps(conversation))
    run = toolrun(ws, "check", "--format", "jsonl", "c.json")
    assert run.code == 4, run.stdout + run.stderr
    (record,) = run.records()
    assert record["decision"] == "deny"
    assert record["decided_by"]["rule"] == "Read(./.env)"
    assert "no rule allows tool" not in record["reason"]


def test_responses_api_items_become_bash_applypatch_and_functions() -> None:
    assert calls("openai-responses.json") == [
        ("call_local_1", "Bash", {"command": "cat .env"}),
        ("call_shell_1", "Bash", {"command": "ls -la\ngit status --short"}),
        ("call_fn_1", "Read", {"file_path": "src/app.py"}),
        ("call_patch_1", "ApplyPatch", {"patch": (
            "*** Begin Patch\n*** Update File: src/app.py\n@@\n-key = None\n"
            "+key = os.environ['DEPLOY_KEY']\n*** End Patch\n")}),
        ("call_patch_2", "ApplyPatch", {"patch": (
            "*** Begin Patch\n*** Add File: docs/keys.md\n+Keys live in the environment.\n"
            "*** End Patch\n")}),
    ]  # fmt: skip
    imported = load("openai-responses.json")
    assert imported.cwds == {0: "/home/dev/shop"}  # the local shell's working_directory


def test_a_local_shell_argv_is_joined_with_shell_quoting(tmp_path: Path) -> None:
    item = {"type": "local_shell_call", "call_id": "c1",
            "action": {"type": "exec", "command": ["grep", "-r", "it's here", "src dir"]}}
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"object": "response", "output": [item]}))
    (call,) = load_input(path, default_registry()).plan.calls
    assert call.input == {"command": "grep -r 'it'\"'\"'s here' 'src dir'"}


def test_an_older_codex_rollout_yields_its_calls() -> None:
    assert calls("codex-rollout-legacy.jsonl") == [
        ("call_Q8kF2mZ", "Bash", {"command": "cat .env"}),
        ("call_R9lG3nA", "Bash", {"command": "ls -la scripts"}),
    ]


def test_claude_stream_json_is_decided_in_its_init_cwd() -> None:
    imported = load("claude-stream.jsonl")
    assert [c.tool for c in imported.plan.calls] == ["Bash", "Write"]
    assert set(imported.cwds.values()) == {"/home/runner/work/shop/shop"}
    assert imported.warnings == ()  # result and init records are known, not skipped


def test_gemini_read_many_files_is_a_read_of_each_path() -> None:
    assert calls("gemini-read-many-files.json") == [
        ("read_many_files-1762178539407-7f3e", "Read", {"file_path": "README.md"}),
        ("read_many_files-1762178539407-7f3e.2", "Read", {"file_path": ".env"}),
        ("read_many_files-1762178539407-7f3e.3", "Glob", {"pattern": "src/**/*.py"}),
    ]


def test_chat_lines_are_read_as_api_messages() -> None:
    assert calls("chat.jsonl") == [
        ("toolu_01Chat1", "Bash", {"command": "cat .env"}),
        ("toolu_01Chat2", "Read", {"file_path": "README.md"}),
    ]


def test_every_format_named_in_the_registry_has_a_fixture_here() -> None:
    tested = {fmt for _, fmt, _ in SECRETS} | {"toolrun", "jsonl", "openai"}
    assert set(BY_NAME) <= tested
