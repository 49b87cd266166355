"""Real ``toolrun exec`` runs of paths the kernel walks through a symlink (#24, point 1).

In the round-3 scene ``src/link`` points to ``T/outside``, so ``src/link/..`` is ``T``
and ``src/link/../ws`` is the workspace itself. toolrun used to fold ``..`` on the string
(``<ws>/src/ws``): acceptEdits emptied the workspace, ``cat`` printed a Read-denied file,
``echo >`` overwrote an Edit-denied one. Each class runs with the spelling from the issue
and other spellings (``cd`` logical and physical, ``set -P``, globs, a symlink the call
makes itself), then the disk (:meth:`Scene.changed`) and the output
(:meth:`Scene.leaked`) are checked. Each row names its source.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.round3.scene import Scene

MODES = ["default", "acceptEdits", "bypassPermissions"]

RM_WORKSPACE = [
    "rm -rf src/link/../ws",  # issue 24 (round-3 corpus)
    "rm -rf src/link/../../<T>/ws",  # by hand
    "cd src/link && rm -rf ../ws",  # by hand (logical cd, physical ..)
    "cd -P src/link/.. && rm -rf ws",  # GNU bash manual (cd -P)
    "set -P; cd src/link/..; rm -rf ws",  # GNU bash manual (set -P)
    "rm -rf src/*/../ws",  # by hand (a glob's match goes through the link)
    "ln -s ../src/link x && rm -rf x/../ws",  # by hand (the call makes the symlink)
]
READ_DENIED = [
    "cat src/link/../ws/.env",  # issue 24 (round-3 corpus)
    "cd src/link; cat ../ws/.env",  # by hand
    "head -n1 src/link/../../<T>/ws/.env",  # by hand
    "cd -P src/link/.. && cat ws/config/.env",  # GNU bash manual (cd -P)
    "cat < src/link/../ws/config/.env",  # by hand (a redirection opens it)
    "cat src/*/../ws/.env",  # by hand (a glob's match)
]
EDIT_DENIED = [
    "echo x > src/link/../ws/docs/a.md",  # issue 24 (round-3 corpus)
    "cd src/link && echo x > ../ws/docs/a.md",  # by hand
    "echo x >> src/link/../../<T>/ws/docs/a.md",  # by hand
    "cd -P src/link/..; echo x > ws/docs/a.md",  # GNU bash manual (cd -P)
    "cp README.md src/link/../ws/docs/a.md",  # sandbox-runtime tests (writes via links)
]


def _spelled(scene: Scene, commands: list[str]) -> list[str]:
    return [c.replace("<T>", scene.tmp.name) for c in commands]


def _ran(results: list[dict[str, Any]]) -> list[str]:
    return [r["input"]["command"] for r in results if r["status"] == "ok"]


@pytest.mark.parametrize("mode", MODES)
def test_rm_through_a_symlink_never_removes_the_workspace(tmp_path: Path, mode: str) -> None:
    scene = Scene.make(tmp_path)
    scene.config()
    _done, results = scene.run(_spelled(scene, RM_WORKSPACE), mode=mode)
    assert len(results) == len(RM_WORKSPACE)
    assert _ran(results) == []
    assert scene.changed() == []


@pytest.mark.parametrize("mode", MODES)
def test_a_read_denied_file_is_not_printed_through_a_symlink(tmp_path: Path, mode: str) -> None:
    scene = Scene.make(tmp_path)
    scene.config()
    _done, results = scene.run(_spelled(scene, READ_DENIED), mode=mode)
    assert [r["decision"] for r in results] == ["deny"] * len(READ_DENIED)
    assert scene.leaked(results) == []


@pytest.mark.parametrize("mode", MODES)
def test_an_edit_denied_file_is_not_written_through_a_symlink(tmp_path: Path, mode: str) -> None:
    scene = Scene.make(tmp_path)
    scene.config()
    _done, results = scene.run(_spelled(scene, EDIT_DENIED), mode=mode)
    assert [r["decision"] for r in results] == ["deny"] * len(EDIT_DENIED)
    assert scene.changed() == []
    assert (scene.ws / "docs" / "a.md").read_text() == "docs sentinel\n"


def test_everyday_dotdot_runs_where_bash_goes(tmp_path: Path) -> None:
    scene = Scene.make(tmp_path)
    scene.config()
    commands = [
        "cd src && cat ../README.md",
        "cat src/../README.md",
        "cd src/link/.. && ls",  # logical: <ws>/src, as bash goes (GNU bash manual, cd)
        "cd config && ls ../docs",
    ]
    # (a cd carries to the next call: each starts from the workspace)
    _done, results = scene.run([f"cd {scene.ws} && {c}" for c in commands])
    assert [r["status"] for r in results] == ["ok"] * len(commands), results
    assert results[0]["output"] == "# readme\n"
    assert "main.py" in results[2]["output"]
    assert scene.changed() == []


def _run_calls(scene: Scene, calls: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    (scene.ws / "plan.json").write_text(json.dumps({"calls": calls}))
    args = [sys.executable, "-m", "toolrun", "exec", "plan.json", "--workspace", str(scene.ws),
            "--format", "jsonl", "--mode", mode]
    done = subprocess.run(args, env=scene.env(), capture_output=True, text=True, check=False,
                          timeout=120, cwd=scene.ws, stdin=subprocess.DEVNULL)
    assert "Traceback" not in done.stderr, done.stderr
    return [json.loads(line) for line in done.stdout.split("\n") if line.strip()]


def test_file_tools_open_the_path_they_were_decided_on(tmp_path: Path) -> None:
    """Read/Write/Edit fold ``..`` on the string and open that path: nothing reaches the
    denied files the kernel would find through the symlink (design §9: one resolver)."""
    scene = Scene.make(tmp_path)
    scene.config()
    given = "src/link/../ws"
    calls = [
        {"tool": "Read", "input": {"file_path": f"{given}/.env"}},
        {"tool": "Read", "input": {"file_path": f"{given}/config/.env"}},
        {"tool": "Edit", "input": {"file_path": f"{given}/docs/a.md",
                                   "old_string": "docs", "new_string": "owned"}},
        {"tool": "Grep", "input": {"pattern": "SECRET", "path": given}},
    ]
    results = _run_calls(scene, calls, "acceptEdits")
    assert len(results) == len(calls)
    assert scene.leaked(results) == []
    assert scene.changed() == []


def test_git_uses_the_repository_the_physical_directory_is_in(tmp_path: Path) -> None:
    """A nested repository behind a symlink inside the workspace: git walks up from where
    the link leads and runs that repository's core.fsmonitor (Claude Code advisory: git
    config runs programs), so ``git -C sub status`` is not a read of the workspace's."""
    scene = Scene.make(tmp_path)
    nested = scene.ws / "vendor" / "lib"
    (nested / "src").mkdir(parents=True)
    (nested / "src" / "x.py").write_text("x\n")
    marker = scene.outside / "PWNED"
    for args in (["init", "-q"], ["config", "core.fsmonitor", f"touch {marker}; false"]):
        subprocess.run(["git", *args], cwd=nested, check=True, capture_output=True)
    (scene.ws / "sub").symlink_to("vendor/lib/src")
    scene._before = scene.snapshot()
    scene.config()
    _done, results = scene.run(["git -C sub status", "git status --short"])
    assert results[0]["decision"] != "allow"
    assert not marker.exists()
    assert results[1]["status"] == "ok"


def test_a_critical_rm_through_a_symlink_is_not_approved_by_ask_allow(tmp_path: Path) -> None:
    # design §4: rm of the workspace, a parent or ~ is never approved by --ask allow
    scene = Scene.make(tmp_path)
    scene.config("permissions: {}\n")
    commands = ["rm -rf src/link/../ws", "cd src/link && rm -rf ../ws", "rm -rf src/link/../*",
                "rm -rf src/link/home/../home"]
    _done, results = scene.run(commands, mode="bypassPermissions", extra=("--ask", "allow"))
    assert _ran(results) == []
    assert scene.changed() == []
