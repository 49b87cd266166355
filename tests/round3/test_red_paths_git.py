"""Red team of points 1 and 4, and the env-prefix class, run for real in the round-3 scene.

Each class runs through ``toolrun exec`` and is checked on the disk (``changed()``) and in
the output (``leaked()``); the engine-level rows are in tests/permissions/test_envcode.py
and below. Each row names its source.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.permissions.conftest import make_config
from tests.round3.scene import DENY_SECRETS, Scene
from toolrun.permissions import PermissionEngine

DENY_RM = DENY_SECRETS.replace("'Edit(./docs/**)'", "'Edit(./docs/**)', 'Bash(rm *)'")

#: Code in a variable's value: each row would remove README.md (without tty, so no pager).
ENV_RUNS_CODE = [
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm README.md' git x",
     "brief; git-config(1) GIT_CONFIG_COUNT"),
    ("GIT_CONFIG_PARAMETERS=\"'alias.y'='!rm README.md'\" git y", "brief; git.c, by hand"),
    ("env GIT_CONFIG_PARAMETERS=\"'alias.z'='!rm README.md'\" git z", "brief; env(1)"),
    ("export GIT_CONFIG_PARAMETERS=\"'alias.w'='!rm README.md'\"; git w", "brief: export"),
    ("declare -x GIT_CONFIG_PARAMETERS=\"'alias.v'='!rm README.md'\" && git v",
     "brief: declare -x"),
    ("LESSOPEN='|rm README.md %s' less src/main.py", "brief; less(1) LESSOPEN"),
    ("typeset -x LESSOPEN='|rm README.md %s'; less src/main.py", "bash(1) typeset, by hand"),
]


def _bash(scene: Scene, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=scene.ws, env=scene.env(),
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False)


def test_the_env_attacks_are_real(tmp_path: Path) -> None:
    # (without toolrun each row removes README.md: the rows test something)
    for k, (command, source) in enumerate(ENV_RUNS_CODE):
        scene = Scene.make(tmp_path / str(k))
        _bash(scene, command)
        assert "ws/README.md" in scene.changed(), source


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits"])
def test_code_in_the_environment_never_runs(tmp_path: Path, mode: str) -> None:
    scene = Scene.make(tmp_path)
    scene.config(DENY_RM)
    _done, results = scene.run([c for c, _s in ENV_RUNS_CODE], mode=mode,
                               extra=("--ask", "allow"))
    assert len(results) == len(ENV_RUNS_CODE)
    for result, (command, source) in zip(results, ENV_RUNS_CODE, strict=True):
        assert result["decision"] != "allow", (command, source)
    assert scene.changed() == []


def test_inert_environment_still_runs(tmp_path: Path) -> None:
    scene = Scene.make(tmp_path)
    scene.config(DENY_RM)
    _done, results = scene.run(["GIT_PAGER=cat git log --oneline", "PAGER=cat git status",
                                "LESS=-R git log -1"], mode="bypassPermissions")
    assert [r["decision"] for r in results] == ["allow"] * 3


# ---------------------------------------------------------------------- find -delete

#: find that empties the workspace or a parent: a critical path, as rm -rf is.
FIND_EMPTIES = [
    ("find src/link/../ws -delete", "brief; the kernel follows src/link first"),
    ("find . -delete", "brief (from the workspace)"),
    ("cd .. && find ws -delete", "brief: from a parent, by hand"),
    ("find -L src/link/.. -delete", "find(1) -L, by hand"),
    ("find ~+ -delete", "bash(1) ~+ is $PWD, by hand"),
    ("find . -exec rm -rf {} +", "destructive_command_guard class, by hand"),
]


@pytest.mark.parametrize(("command", "source"), FIND_EMPTIES)
def test_find_that_empties_the_workspace_is_a_critical_path(
    tmp_path: Path, command: str, source: str
) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (ws / "src" / "link").symlink_to(tmp_path / "outside")
    engine = PermissionEngine(make_config(ws, mode="bypassPermissions"), memo=False)
    decision = engine.decide("Bash", {"command": command}, cwd=ws)
    assert decision.decision != "allow", source
    assert "critical path" in decision.reason, (source, decision.reason)


@pytest.mark.parametrize("command", ["find / -delete", "find ~ -delete", "find -delete"])
def test_find_of_the_root_or_home_is_critical(tmp_path: Path, command: str) -> None:
    engine = PermissionEngine(make_config(tmp_path, mode="bypassPermissions"), memo=False)
    decision = engine.decide("Bash", {"command": command}, cwd=tmp_path)
    assert "critical path" in decision.reason, decision.reason  # brief, by hand


@pytest.mark.parametrize("command", ["find . -name '*.pyc' -delete", "find build -delete",
                                     "find . -type d -name __pycache__ -exec rm -rf {} +",
                                     "find . -empty -delete"])
def test_narrowed_find_is_not_critical(tmp_path: Path, command: str) -> None:
    (tmp_path / "build").mkdir()
    engine = PermissionEngine(make_config(tmp_path, mode="bypassPermissions"), memo=False)
    decision = engine.decide("Bash", {"command": command}, cwd=tmp_path)
    assert decision.decision == "allow", (command, decision.reason)  # everyday, by hand


def test_find_delete_of_the_workspace_never_runs_even_with_ask_allow(tmp_path: Path) -> None:
    scene = Scene.make(tmp_path)
    scene.config("permissions: {}\n")
    commands = ["find src/link/../ws -delete", "cd .. && find ws -delete", "find . -delete"]
    _done, results = scene.run(commands, mode="bypassPermissions", extra=("--ask", "allow"))
    assert [r["decision"] for r in results] != ["allow"] * 3
    assert all(r["decision"] != "allow" for r in results), results
    assert scene.changed() == []


# ---------------------------------------------------------------------- git creates

#: git that creates a repository or a file where an operand says: a write there.
GIT_CREATES = [
    ("git init docs/r", "brief: git init DIR"),
    ("git init -q --bare docs/bare", "git-init(1) --bare, by hand"),
    ("git -C docs init r", "git(1) -C, by hand"),
    ("git worktree add docs/wt", "brief: git worktree add"),
    ("git worktree add -b feat docs/wt2 HEAD", "git-worktree(1) -b, by hand"),
    ("git bundle create docs/all.bundle HEAD", "git-bundle(1), by hand"),
    ("git clone . docs/copy", "brief: git clone URL DIR"),
    ("git clone --separate-git-dir=docs/g . build/c", "git-clone(1), by hand"),
]


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits"])
def test_git_never_creates_under_an_edit_denied_folder(tmp_path: Path, mode: str) -> None:
    scene = Scene.make(tmp_path)
    scene.config()
    _done, results = scene.run([c for c, _s in GIT_CREATES], mode=mode,
                               extra=("--ask", "allow"))
    for result, (command, source) in zip(results, GIT_CREATES, strict=True):
        assert result["decision"] == "deny", (command, source)
    assert scene.changed() == []


@pytest.mark.parametrize("command", ["git init ../made", "git clone . ../made",
                                     "git worktree add ../made", "git init src/link/made"])
def test_git_creating_outside_the_workspace_asks_in_accept_edits(
    tmp_path: Path, command: str
) -> None:
    scene = Scene.make(tmp_path)
    engine = PermissionEngine(make_config(scene.ws, mode="acceptEdits"), memo=False)
    os.environ.setdefault("HOME", str(scene.home))
    decision = engine.decide("Bash", {"command": command}, cwd=scene.ws)
    assert decision.decision == "ask"
    assert any(t.inside is False for s in decision.subcommands for t in s.targets), command


# ---------------------------------------------------------------------- /proc/self/cwd

#: /proc/self/cwd is the *command's* directory (proc(5)); toolrun's own realpath of it
#: is toolrun's, so `cd src && cat /proc/self/cwd/../.env` looked like T/.env.
PROC_SELF = [
    ("cd src && cat /proc/self/cwd/../.env", "proc(5) magic link, by hand"),
    ("cd config && cat /proc/thread-self/cwd/../.env", "proc(5) thread-self, by hand"),
    ("cd docs && cat /proc/self/cwd/../config/.env", "by hand"),
    ("cd src && cat < /proc/self/cwd/../.env", "brief: redirect source, by hand"),
    ("cd src && cat /proc/self/cwd/../.e*", "by hand: a glob under /proc/self"),
    ("cd src && echo x > /proc/self/cwd/../docs/a.md", "by hand: an Edit-denied write"),
]


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits"])
def test_proc_self_cwd_is_the_commands_directory(tmp_path: Path, mode: str) -> None:
    scene = Scene.make(tmp_path)
    scene.config()
    _done, results = scene.run([c for c, _s in PROC_SELF], mode=mode,
                               extra=("--ask", "allow"))
    for result, (command, source) in zip(results, PROC_SELF, strict=True):
        assert result["decision"] == "deny", (command, source)
    assert scene.leaked(results) == []
    assert scene.changed() == []


@pytest.mark.parametrize("command", ["cat /proc/1/cwd/.env", "cat /proc/self/fd/9/x",
                                     "cat /proc/self/root/proc/self/cwd/.env"])
def test_another_process_or_descriptor_under_proc_is_not_resolvable(
    tmp_path: Path, command: str
) -> None:
    engine = PermissionEngine(make_config(tmp_path, deny=("Read(./.env)",),
                                          mode="bypassPermissions"), memo=False)
    assert engine.decide("Bash", {"command": command}, cwd=tmp_path).decision != "allow"
