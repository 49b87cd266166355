"""SessionStart warms `toolrun hook`: the server starts and loads the config before the
session's first tool call, so that call is answered warm like every later one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.hook.conftest import Hook, answer, payload, pre
from tests.hook.test_server import _last, _server_pid


def session_start(ws: Path, **fields: Any) -> dict[str, Any]:
    """Claude Code's SessionStart input (docs/hooks "SessionStart input")."""
    return {"session_id": "sess-1", "transcript_path": str(ws / "transcript.jsonl"),
            "cwd": str(ws), "hook_event_name": "SessionStart", "source": "startup",
            **fields}  # fmt: skip


@pytest.mark.parametrize(
    "start",
    [
        {},
        {"source": "resume"},
        {"source": "clear", "model": "claude-sonnet-4"},
        {"session_id": "another-session"},
    ],
    ids=["startup", "resume", "clear", "other-session"],
)
def test_after_session_start_the_first_tool_call_is_answered_warm(
    hook: Hook, ws: Path, runtime: Path, start: dict[str, Any]
) -> None:
    env = {"XDG_RUNTIME_DIR": str(runtime), "TOOLRUN_HOOK_SERVER": "on"}
    started = hook(session_start(ws, **start), env=env)
    assert answer(started) is None  # nothing printed: no context added, nothing decided
    pid = _server_pid(runtime)
    deny = payload(ws, "Bash", {"command": "rm -rf build"})
    assert answer(hook(deny, env=env)) == pre(
        "deny", "toolrun: denied: deny rule Bash(rm *) (toolrun.yaml:11) matches `rm -rf build`"
    )
    assert _last(ws)["metadata"]["decided_in"] == {"pid": pid, "warm": True}  # type: ignore[index]
    # SessionStart itself is no call: the session's journal holds only the tool call
    records = (ws / ".toolrun" / "runs" / "session-sess-1.jsonl").read_text().splitlines()
    assert [json.loads(r)["event"] for r in records].count("result") == 1


def test_session_start_without_the_server_prints_nothing_and_starts_none(
    hook: Hook, ws: Path, runtime: Path
) -> None:
    env = {"XDG_RUNTIME_DIR": str(runtime), "TOOLRUN_HOOK_SERVER": "off"}
    assert answer(hook(session_start(ws), env=env)) is None
    assert not list(runtime.glob("toolrun/*.pid"))


def test_session_start_with_a_broken_config_is_said_at_the_first_call(
    hook: Hook, ws: Path, runtime: Path
) -> None:
    (ws / "toolrun.yaml").write_text("permissions:\n  deney: ['Bash']\n")
    env = {"XDG_RUNTIME_DIR": str(runtime), "TOOLRUN_HOOK_SERVER": "on"}
    assert answer(hook(session_start(ws), env=env)) is None
    first = hook(payload(ws, "Bash", {"command": "ls"}), env=env)
    assert first.returncode == 1 and "deney" in first.stderr  # a non-blocking error


def test_gemini_session_start_is_accepted(hook: Hook, ws: Path, runtime: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(runtime), "TOOLRUN_HOOK_SERVER": "off"}
    start = session_start(ws)
    done = hook(start, "--format", "gemini", env=env)
    assert done.returncode == 0 and done.stdout == "", done.stderr
