"""git's history and configuration, decided by the engine in a real repository.

The repository is the round-3 scene: ``.env`` and ``config/.env`` are committed and
Read-denied, ``docs/`` is Edit-denied. Each row names where the attack (or the everyday
read) comes from.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.permissions.conftest import make_config
from tests.round3.scene import Scene
from toolrun.permissions import Decision, PermissionEngine
from toolrun.permissions.programs.git import config as git_config

DENY = ("Read(./.env)", "Read(./config/.env)", "Edit(./docs/**)")


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    return Scene.make(tmp_path_factory.mktemp("git-history"))


def decide(scene: Scene, command: str, *, mode: str = "default",
           deny: tuple[str, ...] = DENY, memo: bool = False) -> Decision:
    engine = PermissionEngine(make_config(scene.ws, deny=deny, mode=mode), memo=memo)
    return engine.decide("Bash", {"command": command}, cwd=scene.ws)


# ---------------------------------------------------------------------- blob content

#: (command, source). Each prints a Read-denied file's content out of git.
PRINTS_SECRET = [
    # class: a blob named REV:PATH
    ("git show HEAD:.env", "issue 24 corpus (Claude Code advisory class)"),
    ("git show :.env", "gitrevisions(7) ':path' (index), by hand"),
    ("git show HEAD~0:./.env", "gitrevisions(7) './path' relative to cwd, by hand"),
    ("git show main:config/.env", "by hand"),
    ("git cat-file -p HEAD:.env", "issue 24 corpus"),
    ("git cat-file blob :0:.env", "gitrevisions(7) ':0:path', by hand"),
    ("git show HEAD:config/../.env", "by hand"),
    ("git show 'HEAD@{0}:.env'", "gitrevisions(7) '@{n}', by hand"),
    # class: patches out of history
    ("git log -p -- .env", "issue 24 corpus"),
    ("git log --patch -- .env", "git-log(1), by hand"),
    ("git diff HEAD~1 -- .env", "issue 24 corpus"),
    ("git log -p", "by hand: no pathspec prints every file"),
    ("git show", "git-show(1): the last commit's diff"),
    ("git log -U1 -- config/.env", "git-log(1) -U<n>, by hand"),
    ("git whatchanged -p", "git-whatchanged(1), by hand"),
    ("git log -L1,1:.env", "git-log(1) -L, by hand"),
    ("git log -SSECRET --oneline", "git-log(1) pickaxe: tells what .env holds, by hand"),
    ("git format-patch --stdout --root", "git-format-patch(1), by hand"),
    ("git show --format=%H -- .env", "by hand"),
    # class: grep, blame
    ("git grep SECRET", "issue 24 corpus"),
    ("git grep -h SECRET HEAD", "git-grep(1) tree search, by hand"),
    ("git grep -e SECRET -- .env", "by hand"),
    ("git grep --cached SECRET", "git-grep(1) --cached, by hand"),
    ("git blame .env", "issue 24 corpus"),
    ("git annotate config/.env", "git-annotate(1), by hand"),
    ("git blame -L1,1 HEAD -- .env", "by hand"),
    # class: whole trees
    ("git archive HEAD", "git-archive(1), by hand"),
    ("git archive --format=tar HEAD .env", "by hand"),
    ("git fast-export --all", "git-fast-export(1), by hand"),
    ("git config -f .env --list", "git-config(1) --file prints it, by hand"),
    ("git config --blob=HEAD:.env --list", "git-config(1) --blob, by hand"),
]


@pytest.mark.parametrize(("command", "source"), PRINTS_SECRET)
@pytest.mark.parametrize("mode", ["default", "bypassPermissions", "acceptEdits"])
def test_printing_a_denied_file_out_of_git_is_a_denied_read(
    scene: Scene, command: str, source: str, mode: str
) -> None:
    decision = decide(scene, command, mode=mode)
    assert decision.decision == "deny", (source, decision.reason)
    assert "Read(./" in decision.reason


def test_an_object_id_may_be_the_denied_blob(scene: Scene) -> None:
    blob = subprocess.run(["git", "rev-parse", "HEAD:.env"], cwd=scene.ws, text=True,
                          capture_output=True, check=True).stdout.strip()
    for command in (f"git cat-file -p {blob}", f"git show {blob[:10]}"):  # by hand
        assert decide(scene, command).decision == "deny"


@pytest.mark.parametrize("command", [
    "git cat-file --batch", "git cat-file --batch-command", "git log -p $REV",
    "git --git-dir=.git show HEAD:.env", "git x-unknown-alias",
])  # fmt: skip
def test_what_toolrun_cannot_tell_asks_while_reads_are_guarded(scene: Scene, command: str
                                                               ) -> None:
    # (by hand: stdin object names, a computed revision, another git dir, an alias)
    assert decide(scene, command).decision == "ask"
    assert decide(scene, command, mode="bypassPermissions").decision != "allow"


def test_without_read_rules_history_costs_nothing_and_reads_stay_read_only(
    scene: Scene,
) -> None:
    assert decide(scene, "git log -p", deny=()).decision == "allow"
    assert decide(scene, "git show HEAD:.env", deny=()).decision == "allow"


def test_an_ask_rule_asks_in_bypass_too(scene: Scene) -> None:
    decision = decide(scene, "git show HEAD:.env", deny=(), mode="bypassPermissions")
    assert decision.decision == "allow"
    engine = PermissionEngine(make_config(scene.ws, ask=("Read(./.env)",),
                                          mode="bypassPermissions"))
    asked = engine.decide("Bash", {"command": "git show HEAD:.env"}, cwd=scene.ws)
    assert asked.decision == "ask"


def test_git_diff_of_the_working_tree_prints_only_what_changed(tmp_path: Path) -> None:
    scene = Scene.make(tmp_path)
    engine = PermissionEngine(make_config(scene.ws, deny=DENY))

    def diff(command: str = "git diff") -> str:
        return engine.decide("Bash", {"command": command}, cwd=scene.ws).decision

    assert diff() == "allow"  # nothing changed: nothing printed
    assert diff("git diff --cached") == "allow"
    (scene.ws / ".env").write_text("SECRET=changed\n")
    assert diff() == "deny"  # the remembered allow is not reused: .env changed
    assert diff("git diff HEAD") == "deny"
    assert diff("git diff --cached") == "allow"
    subprocess.run(["git", "add", ".env"], cwd=scene.ws, check=True, env=scene.env())
    assert diff("git diff --cached") == "deny"


# ---------------------------------------------------------------------- configuration

#: Configuration git runs as a program: never allowed by a mode or a rule.
RUNS_CONFIG = [
    # class: -c / --config-env of a code key
    ("git -c core.pager='sh -c \"touch x\"' log", "brief, Claude Code advisory class"),
    ("git -c alias.x='!rm f' x", "issue 24 corpus"),
    ("git -c core.fsmonitor='touch x' status", "Claude Code advisory GHSA core.fsmonitor"),
    ("git -ccore.sshCommand=x fetch", "git(1) -c glued, by hand"),
    ("git --config-env=core.pager=EVIL log", "git(1) --config-env, by hand"),
    ("git -c diff.x.textconv=cat diff", "gitattributes(5) textconv, by hand"),
    ("git -c ALIAS.ls='!touch x' ls", "git-config(1): names are case-insensitive, by hand"),
    ("git -c include.path=../.env log", "git-config(1) include, by hand"),
    ("git -c \"$CFG\" log", "by hand: a computed configuration"),
    # class: git config setting a code key
    ("git config --local core.fsmonitor 'CMD'", "issue 24 corpus"),
    ("git config core.fsmonitor x", "brief"),
    ("git config --add core.fsmonitor x", "brief"),
    ("git config set core.hooksPath /tmp", "git-config(1) 2.46 'set', by hand"),
    ("git config alias.st '!rm f'", "by hand"),
    ("git config --replace-all filter.x.smudge 'rm f'", "gitattributes(5) filter, by hand"),
    ("git config --global core.pager 'touch x'", "by hand"),
    # class: options whose value is a command
    ("git rebase -x 'rm f' HEAD~1", "git-rebase(1) --exec, by hand"),
    ("git grep -Ocat x", "git-grep(1) -O, by hand"),
    ("git difftool -x 'rm f'", "git-difftool(1) --extcmd, by hand"),
    ("git submodule foreach 'rm f'", "git-submodule(1) foreach, by hand"),
    ("git bisect run rm f", "git-bisect(1) run, by hand"),
    ("git fetch --upload-pack='touch x' origin", "git-fetch(1), by hand"),
    ("git clone -c core.fsmonitor=x src dst", "git-clone(1) --config, by hand"),
]


@pytest.mark.parametrize(("command", "source"), RUNS_CONFIG)
def test_configuration_git_runs_is_not_analysable(scene: Scene, command: str, source: str
                                                  ) -> None:
    decision = decide(scene, command)
    assert decision.decision == "ask", source
    assert "cannot be analysed" in decision.reason
    bypass = decide(scene, command, mode="bypassPermissions", deny=("Bash(rm *)",))
    assert bypass.decision != "allow", source
    allowed = PermissionEngine(make_config(scene.ws, allow=("Bash(git *)",)))
    assert allowed.decide("Bash", {"command": command}, cwd=scene.ws).decision == "ask"


@pytest.mark.parametrize(("command", "where"), [
    ("git config user.name bob", ".git/config"),
    ("git config --local user.name bob", ".git/config"),
    ("git config --worktree user.name bob", ".git/config.worktree"),
    ("git config --unset user.name", ".git/config"),
    ("git config --rename-section a b", ".git/config"),
    ("git config --global user.name bob", ".gitconfig"),
    ("git -C src config user.name bob", ".git/config"),
])  # fmt: skip
def test_setting_configuration_is_a_write_of_a_protected_file(
    scene: Scene, command: str, where: str
) -> None:
    # git-config(1) FILES; by hand
    assert decide(scene, command).decision == "ask"
    bypass = decide(scene, command, mode="bypassPermissions")
    assert bypass.decision == "ask"
    assert any(t.access == "write" and t.target.endswith(where) for s in bypass.subcommands
               for t in s.targets)


def test_a_named_config_file_is_checked_against_edit_rules(scene: Scene) -> None:
    decision = decide(scene, "git config -f docs/x.cfg a.b c", mode="bypassPermissions")
    assert decision.decision == "deny"


@pytest.mark.parametrize("key", [
    "core.pager", "core.fsmonitor", "core.sshCommand", "core.editor", "core.hooksPath",
    "diff.external", "diff.md.textconv", "diff.md.command", "filter.lfs.clean",
    "filter.x.process", "merge.x.driver", "credential.helper", "sequence.editor",
    "gpg.program", "uploadpack.packObjectsHook", "pager.log", "sendemail.toCmd",
    "core.askPass", "protocol.ext.allow", "include.path", "includeIf.gitdir:x.path",
    "alias.x", "remote.origin.uploadpack", "submodule.x.update", "web.browser",
])  # fmt: skip
def test_code_keys(key: str) -> None:
    assert git_config.code_key(key)  # git-config(1), the brief's list


@pytest.mark.parametrize("key", ["user.name", "user.email", "color.ui", "log.date",
                                 "core.quotepath", "init.defaultBranch", "pull.rebase"])
def test_plain_keys(key: str) -> None:
    assert not git_config.code_key(key)


# ---------------------------------------------------------------------- option writes

@pytest.mark.parametrize(("command", "decision"), [
    ("git log --output=.git/hooks/pre-commit", "ask"),  # issue 24 corpus
    ("git log --outp=.git/hooks/pre-commit", "ask"),  # parse-options prefix, by hand
    ("git -C src log --output=../.git/hooks/pre-push", "ask"),  # by hand
    ("git diff --output .git/hooks/post-checkout", "ask"),  # by hand
    ("git diff --output=docs/a.md", "deny"),  # brief
    ("git format-patch -o .git/hooks HEAD", "ask"),  # git-format-patch(1), by hand
    ("git archive -o docs/a.md HEAD src", "deny"),  # git-archive(1), by hand
])  # fmt: skip
def test_writes_hidden_in_options_are_checked_in_bypass(
    scene: Scene, command: str, decision: str
) -> None:
    assert decide(scene, command, mode="bypassPermissions", deny=("Edit(./docs/**)",)
                  ).decision == decision


# ---------------------------------------------------------------------- everyday reads

#: Everyday git reads that stay allowed, with the denied files committed (peer suites:
#: claude-code-safety-net and destructive_command_guard allow lists; issue 24's list).
EVERYDAY = [
    ("git status", "claude-code-safety-net"),
    ("git status --short", "destructive_command_guard"),
    ("git log --oneline -5", "claude-code-safety-net"),
    ("git log --graph --oneline --all", "destructive_command_guard"),
    ("git log -n 5 --format=%H", "by hand"),
    ("git log --stat", "by hand"),
    ("git log --name-only", "by hand"),
    ("git log @{u}..", "issue 24"),
    ("git log main..HEAD", "destructive_command_guard"),
    ("git log -p -- src", "by hand: a pathspec without a denied file"),
    ("git diff", "claude-code-safety-net"),
    ("git diff --stat", "destructive_command_guard"),
    ("git diff --cached", "claude-code-safety-net"),
    ("git diff HEAD", "by hand"),
    ("git diff -- src", "by hand"),
    ("git show --stat", "by hand"),
    ("git show -s --format=%s HEAD", "by hand"),
    ("git show HEAD^{tree}", "issue 24"),
    ("git show HEAD:README.md", "by hand"),
    ("git show HEAD:src/main.py", "by hand"),
    ("git blame README.md", "destructive_command_guard"),
    ("git grep print -- src", "by hand"),
    ("git grep -n name -- config/app.yaml", "by hand"),
    ("git stash show stash@{0}", "issue 24"),
    ("git stash list", "claude-code-safety-net"),
    ("git rev-parse @{upstream}", "issue 24"),
    ("git rev-parse HEAD", "claude-code-safety-net"),
    ("git rev-parse --show-toplevel", "destructive_command_guard"),
    ("git config user.name", "issue 24"),
    ("git config --get user.email", "issue 24"),
    ("git config --list", "by hand"),
    ("git config get user.name", "git-config(1) 2.46, by hand"),
    ("git branch --contains HEAD", "issue 24"),
    ("git branch -a", "claude-code-safety-net"),
    ("git branch --merged main", "destructive_command_guard"),
    ("git branch --show-current", "by hand"),
    ("git tag --points-at HEAD", "issue 24"),
    ("git tag --sort=-creatordate", "issue 24"),
    ("git tag -l 'v*'", "by hand"),
    ("git remote -v", "claude-code-safety-net"),
    ("git ls-files", "destructive_command_guard"),
    ("git ls-tree HEAD", "by hand"),
    ("git cat-file -t HEAD", "by hand"),
    ("git describe --tags --always", "destructive_command_guard"),
    ("git shortlog -sn", "by hand"),
    ("git merge-base HEAD main", "by hand"),
    ("git reflog -n 5", "by hand"),
    ("git worktree list", "claude-code-safety-net"),
]


@pytest.mark.parametrize(("command", "source"), EVERYDAY)
def test_everyday_git_reads_stay_allowed(scene: Scene, command: str, source: str) -> None:
    decision = decide(scene, command)
    assert decision.decision == "allow", (source, decision.reason)


def test_everyday_table_is_large_enough() -> None:
    assert len(EVERYDAY) >= 25


def test_tracked_paths_are_listed_once_per_repository_state(scene: Scene) -> None:
    from toolrun.permissions.programs.git import history

    first = history.tracked(str(scene.ws))
    assert first is history.tracked(str(scene.ws))  # remembered: the same tuple
    assert first is not None and os.path.join(str(scene.ws), ".env") in first
