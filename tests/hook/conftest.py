"""A workspace with toolrun and Claude Code rules, and `python -m toolrun hook` run for real."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

TOOLRUN_YAML = textwrap.dedent(
    """\
    permissions:
      allow:
        - "Bash(npm test)"
        - "Read(src/**)"
        - "mcp__memory__read_graph"
        - "WebFetch(domain:docs.python.org)"
      ask:
        - "Bash(git push *)"
        - "Edit(config/**)"
      deny:
        - "Bash(rm *)"
        - "Read(./.env)"
        - "WebFetch(domain:evil.example)"
        - "mcp__memory__delete_entities"
    toolrun:
      loadClaudeSettings: true
    """
)
CLAUDE_SETTINGS = {
    "permissions": {
        "allow": ["Bash(make *)", "Grep"],
        "ask": ["Read(//etc/**)"],
        "deny": ["Bash(curl *)", "Edit(secrets/**)"],
    }
}

Hook = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("old = 1\n")
    (ws / "config").mkdir()
    (ws / ".env").write_text("TOKEN=1\n")
    (ws / "toolrun.yaml").write_text(TOOLRUN_YAML)
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps(CLAUDE_SETTINGS, indent=2) + "\n")
    return ws


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLRUN_", "CLAUDE_"))}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT), TOOLRUN_HOOK_SERVER="off")
    return env


def payload(ws: Path, tool: str, tool_input: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """Claude Code's PreToolUse input (docs/hooks "PreToolUse input")."""
    data = {
        "session_id": "sess-1",
        "transcript_path": str(ws / "transcript.jsonl"),
        "cwd": str(ws),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }
    data.update(fields)
    return data


@pytest.fixture
def hook(ws: Path, tmp_path: Path) -> Hook:
    """Run `python -m toolrun hook ARGS` in the workspace with ``stdin`` (a payload dict,
    or bytes as they are)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)

    def run(
        stdin: dict[str, Any] | bytes, *args: str, env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
        done = subprocess.run(
            [sys.executable, "-m", "toolrun", "hook", *args],
            input=data,
            capture_output=True,
            cwd=cwd or ws,
            env={**base_env(home), **(env or {})},
            timeout=120,
            check=False,
        )
        return subprocess.CompletedProcess(
            done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
        )

    return run


def answer(done: subprocess.CompletedProcess[str]) -> Any:
    """The JSON a hook printed (None: nothing), after checking it exited 0 cleanly."""
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def pre(decision: str, reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A private runtime directory for hook servers; every server started there is
    stopped at the end: by the pid it wrote, and by its command line (a server started
    while a test's own listener held the socket writes no pid file). Short, as a real
    one is: a socket's address holds 107 bytes, and a test's tmp_path under pytest-xdist
    (``.../popen-gw0/test_a_long_name0/``) leaves too few for the socket's name."""
    folder = Path(tempfile.mkdtemp(prefix="trh-"))  # (mode 0700)
    try:
        yield folder
    finally:
        _stop_servers(folder)
        shutil.rmtree(folder, ignore_errors=True)


def _stop_servers(folder: Path) -> None:
    pids = set()
    for pid_file in folder.glob("toolrun/*.pid"):
        with contextlib.suppress(OSError, ValueError):
            pids.add(int(pid_file.read_text()))
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"toolrun.live.server" in argv and any(str(folder).encode() in a for a in argv):
                pids.add(int(proc.name))
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
