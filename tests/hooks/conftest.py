"""Helpers for hook tests: configs built in code, real hook scripts written to tmp_path."""

from __future__ import annotations

import itertools
import os
import shlex
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from toolrun.config.models import (
    Config,
    HookCommand,
    HookMatcher,
    PermissionRule,
    SettingSource,
    SourceKind,
    ToolrunSettings,
)
from toolrun.hooks import HookRunner

PY = shlex.quote(sys.executable)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


class Hooks:
    """Builds a Config with hooks; every hook and group gets its own source line."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.file = workspace / "toolrun.yaml"
        self._lines = itertools.count(10)
        self.groups: list[HookMatcher] = []

    def source(self) -> SettingSource:
        return SettingSource(SourceKind.TOOLRUN, self.file, next(self._lines), self.workspace)

    def add(
        self,
        event: str,
        matcher: str,
        *commands: str | tuple[str, Mapping[str, Any]],
        sequential: bool = False,
    ) -> Hooks:
        group_source = self.source()
        hooks = []
        for item in commands:
            command, options = (item, {}) if isinstance(item, str) else item
            hooks.append(
                HookCommand(
                    command=command,
                    timeout=options.get("timeout"),
                    source=self.source(),
                    if_rule=options.get("if"),
                )
            )
        self.groups.append(HookMatcher(event, matcher, tuple(hooks), group_source, sequential))
        return self

    def config(
        self,
        *,
        failure: str = "open",
        timeout: float = 600.0,
        rules: Sequence[tuple[str, str]] = (),
        mode: str = "default",
    ) -> Config:
        return Config(
            workspace=self.workspace,
            default_mode=mode,  # type: ignore[arg-type]
            rules=tuple(PermissionRule(b, t, self.source()) for b, t in rules),  # type: ignore[arg-type]
            hooks=tuple(self.groups),
            toolrun=ToolrunSettings(hook_timeout=timeout, hook_failure=failure),  # type: ignore[arg-type]
        )

    def runner(self, **kwargs: Any) -> HookRunner:
        return HookRunner(self.config(**kwargs), run_id="run-test")


@pytest.fixture
def hooks(ws: Path) -> Hooks:
    return Hooks(ws)


def script(directory: Path, name: str, body: str) -> Path:
    """Write an executable hook script (shell or Python, by its #! line)."""
    path = directory / name
    path.write_text(body.lstrip())
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def py_hook(directory: Path, name: str, body: str) -> str:
    """Write a Python hook and return the command that runs it with this interpreter."""
    path = directory / name
    path.write_text(body.lstrip())
    return f"{PY} {shlex.quote(str(path))}"


def alive(pid: int) -> bool:
    """Is ``pid`` a running (not zombie) process?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def wait_gone(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return not alive(pid)


def running_with(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``: found without the process
    having to say who it is (a hook killed early never writes its pid file)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes() and alive(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def wait_none_running(marker: str, within: float = 10.0) -> bool:
    """Whether every process holding ``marker`` is gone, waiting at most ``within``
    seconds (a bound on a kill already sent, not a speed check)."""
    deadline = time.monotonic() + within
    while running_with(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not running_with(marker)


def toolrun_exec(
    ws: Path, config: str, calls: Sequence[Any], *args: str, turns: bool = False,
    env: Mapping[str, str] | None = None,
) -> tuple[int, list[dict[str, Any]], str]:
    """A real ``toolrun exec`` process in ``ws`` with ``config`` as its toolrun.yaml:
    (exit code, the jsonl results, stderr). ``turns``: ``calls`` is a list of turns."""
    import json
    import subprocess

    (ws / "toolrun.yaml").write_text(config)
    plan = {"turns": [{"calls": list(t)} for t in calls]} if turns else {"calls": list(calls)}
    (ws / "plan.json").write_text(json.dumps(plan))
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "plan.json", "--format", "jsonl", *args],
        cwd=ws, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **(env or {})},
    )  # fmt: skip
    results = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, results, done.stderr


def journal(ws: Path) -> list[dict[str, Any]]:
    """The records of the workspace's one run journal."""
    import json

    (path,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def hooks_yaml(event: str, matcher: str, *commands: str, extra: str = "") -> str:
    """A toolrun.yaml holding ``commands`` as ``event`` hooks (commands JSON-quoted)."""
    import json

    items = ", ".join("{type: command, command: " + json.dumps(c) + "}" for c in commands)
    return (
        f"hooks:\n  {event}:\n    - matcher: {json.dumps(matcher)}\n      hooks: [{items}]\n"
        + extra
    )
