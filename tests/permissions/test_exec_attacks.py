"""Real `toolrun exec` runs of published bypasses: nothing on disk changes.

Each plan runs in a subprocess without a terminal (asks become denials); afterwards the
test looks at the files the command would have removed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def _exec(ws: Path, command: str, config: str, *extra: str) -> subprocess.CompletedProcess[str]:
    (ws / "toolrun.yaml").write_text(config)
    plan = {"calls": [{"tool": "Bash", "input": {"command": command}}]}
    (ws / "plan.yaml").write_text(json.dumps(plan))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "toolrun",
            "exec",
            "plan.yaml",
            "--workspace",
            str(ws),
            "--format",
            "jsonl",
            *extra,
        ],
        cwd=ws,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def scene(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    victim = tmp_path / "victim"
    for d in (ws / "tree" / "deep", victim):
        d.mkdir(parents=True)
    (victim / "keep.txt").write_text("x")
    (ws / "tree" / "deep" / "keep.txt").write_text("x")
    return ws, victim


@pytest.mark.parametrize("command", [
    "echo hi\n\\rm -rf ../victim", "ls\n\\r\\m -rf ../victim",
])  # fmt: skip
def test_newline_hidden_rm_does_not_run(scene: tuple[Path, Path], command: str) -> None:
    ws, victim = scene
    result = _exec(ws, command, "permissions: {}\n")
    assert result.returncode == 5, result.stdout + result.stderr
    assert (victim / "keep.txt").exists()


@pytest.mark.parametrize("command", [
    "r${E}m -rf ../victim", "trap 'rm -rf ../victim' EXIT",
    "echo x | sed '1e rm -rf ../victim'",
])  # fmt: skip
def test_bypass_with_a_deny_rule_does_not_run_what_it_cannot_read(
    scene: tuple[Path, Path], command: str
) -> None:
    ws, victim = scene
    config = "permissions:\n  defaultMode: bypassPermissions\n  deny: ['Bash(rm *)']\n"
    result = _exec(ws, command, config)
    assert result.returncode in (4, 5), result.stdout + result.stderr
    assert (victim / "keep.txt").exists()


@pytest.mark.parametrize("command", ["find tree -{delete,print}"])
def test_braces_do_not_smuggle_find_delete_past_an_allow_rule(
    scene: tuple[Path, Path], command: str
) -> None:
    ws, _victim = scene
    result = _exec(ws, command, "permissions:\n  allow: ['Bash(find *)']\n")
    assert result.returncode == 5, result.stdout + result.stderr
    assert (ws / "tree" / "deep" / "keep.txt").exists()


def test_rm_after_a_subshell_cd_does_not_run_under_bypass(scene: tuple[Path, Path]) -> None:
    ws, victim = scene
    config = "permissions:\n  defaultMode: bypassPermissions\n"
    result = _exec(ws, "(cd .. && rm -rf victim)", config)
    assert result.returncode == 5, result.stdout + result.stderr
    assert (victim / "keep.txt").exists()
