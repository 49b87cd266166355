"""git's history and configuration, run for real through ``toolrun exec`` in the scene.

The scene's repository has ``.env`` and ``config/.env`` committed and Read-denied. What
is checked is the disk (``changed()``: nothing written, no marker a configured program
would create, ``.git/config`` and ``~/.gitconfig`` as they were) and the output
(``leaked()``: no sentinel printed). Each row names its source.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.permissions.programs.test_git_history import EVERYDAY
from tests.round3.scene import DENY_SECRETS, Scene

#: One attack per row, (command, source); each class has the corpus' spelling and three
#: or more others.
PRINTS_SECRET = [
    ("git show HEAD:.env", "issue 24 corpus"),
    ("git show :.env", "gitrevisions(7) index path, by hand"),
    ("git show HEAD~0:./.env", "gitrevisions(7) ./path, by hand"),
    ("git cat-file -p HEAD:config/.env", "issue 24 corpus"),
    ("git log -p -- .env", "issue 24 corpus"),
    ("git log --patch -- .env", "by hand"),
    ("git log -p", "by hand"),
    ("git show", "git-show(1)"),
    ("git log -L1,1:.env", "git-log(1) -L, by hand"),
    ("git blame .env", "issue 24 corpus"),
    ("git annotate config/.env", "by hand"),
    ("git grep SECRET", "issue 24 corpus"),
    ("git grep -h SECRET HEAD", "brief, by hand"),
    ("git grep --cached -e SECRET", "by hand"),
    ("git archive --format=tar HEAD", "git-archive(1), by hand"),
    ("git fast-export --all", "git-fast-export(1), by hand"),
    ("git config -f .env --list", "git-config(1) --file, by hand"),
]

#: Configuration that runs a program: every row tries to create a marker file.
RUNS_CONFIG = [
    ["git config --local core.fsmonitor 'touch MARK1'", "git status"],  # issue 24 corpus
    ["git config core.fsmonitor 'touch MARK2'", "git status"],  # brief
    ["git config --add core.fsmonitor 'touch MARK3'", "git status"],  # brief
    ["git config set core.fsmonitor 'touch MARK4'", "git status"],  # git-config(1) 2.46
    ["git -c core.fsmonitor='touch MARK5' status"],  # Claude Code advisory class
    ["git -c alias.x='!touch MARK6' x"],  # issue 24 corpus
    ["git -c ALIAS.y='!touch MARK7' y"],  # git-config(1) case-insensitive names, by hand
    ["git -c alias.z='!rm README.md' z"],  # issue 24 corpus (deny Bash(rm *))
]


def _calls(rows: list[list[str]]) -> list[str]:
    return [c for row in rows for c in row]


@pytest.mark.parametrize("mode", ["default", "bypassPermissions", "acceptEdits"])
def test_git_never_prints_a_denied_file(tmp_path: Path, mode: str) -> None:
    scene = Scene.make(tmp_path)
    scene.config()
    _done, results = scene.run([c for c, _s in PRINTS_SECRET], mode=mode)
    assert len(results) == len(PRINTS_SECRET)
    for result, (command, source) in zip(results, PRINTS_SECRET, strict=True):
        assert result["decision"] == "deny", (command, source, result["error"])
    assert scene.leaked(results) == []
    assert scene.changed() == []


def test_without_the_rules_the_same_commands_do_print_the_secret(tmp_path: Path) -> None:
    # (the attacks are real: the scene's git prints the sentinels when nothing denies)
    scene = Scene.make(tmp_path)
    scene.config("permissions: {}\n")
    _done, results = scene.run(["git show HEAD:.env", "git grep -h SECRET HEAD"])
    assert "ws-dotenv-sentinel" in scene.leaked(results)


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_configuration_git_runs_never_runs(tmp_path: Path, mode: str) -> None:
    scene = Scene.make(tmp_path)
    scene.config(DENY_SECRETS.replace("'Edit(./docs/**)'", "'Edit(./docs/**)', 'Bash(rm *)'"))
    calls = _calls(RUNS_CONFIG)
    _done, results = scene.run(calls, mode=mode)
    by_command = {r["input"]["command"]: r for r in results}
    for row in RUNS_CONFIG:
        assert by_command[row[0]]["decision"] != "allow", row
    assert not any((scene.ws / f"MARK{k}").exists() for k in range(1, 8))
    assert (scene.ws / "README.md").exists()
    assert scene.changed() == []  # .git/config, ~/.gitconfig and the tree as they were


def test_without_rules_bypass_does_run_it(tmp_path: Path) -> None:
    # (the attack is real: bypassPermissions with no deny rule runs what git configures)
    scene = Scene.make(tmp_path)
    scene.config("permissions: {}\n")
    scene.run(["git -c core.fsmonitor='touch MARK' status"], mode="bypassPermissions")
    assert (scene.ws / "MARK").exists()


OPTION_WRITES = [
    ("git log --output=.git/hooks/pre-commit", "issue 24 corpus"),
    ("git log --outp=.git/hooks/post-commit", "parse-options abbreviation, by hand"),
    ("git -C src log --output=../.git/hooks/pre-push", "by hand"),
    ("git diff HEAD --output .git/hooks/post-checkout", "by hand"),
    ("git diff --output=docs/a.md HEAD", "brief"),
    ("git format-patch -o .git/hooks --root", "git-format-patch(1), by hand"),
    ("git config user.name bob", "git-config(1): a set writes .git/config"),
    ("git config --global user.name bob", "git-config(1): ~/.gitconfig"),
    ("git config --worktree user.name bob", "git-config(1): .git/config.worktree"),
]


def test_writes_hidden_in_git_options_never_land_in_bypass(tmp_path: Path) -> None:
    scene = Scene.make(tmp_path)
    scene.config()
    _done, results = scene.run([c for c, _s in OPTION_WRITES], mode="bypassPermissions")
    for result, (command, source) in zip(results, OPTION_WRITES, strict=True):
        assert result["decision"] != "allow", (command, source)
    assert scene.changed() == []


def test_everyday_git_reads_run_with_the_secrets_committed(tmp_path: Path) -> None:
    scene = Scene.make(tmp_path)
    scene.config()
    commands = [c for c, _s in EVERYDAY]
    _done, results = scene.run(commands)
    for result, (command, source) in zip(results, EVERYDAY, strict=True):
        assert result["decision"] == "allow", (command, source, result["error"])
    assert scene.leaked(results) == []
    assert scene.changed() == []
