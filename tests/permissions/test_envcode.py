"""Environment that runs code: a VAR= prefix, env VAR=, export/declare before a command.

Under bypassPermissions with ``deny: ["Bash(rm *)"]`` each row must not be allowed: the
``rm`` is in a variable's value, where no deny rule can see it. Each row names its source.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.permissions.conftest import make_config
from toolrun.permissions import PermissionEngine, envcode
from toolrun.permissions.bash import analyse

#: (command, source). The value is code, or names what loads code.
RUNS_CODE = [
    # class: git runs the variable
    ("GIT_PAGER='rm f' git -p log", "brief; git(1) GIT_PAGER"),
    ("GIT_EXTERNAL_DIFF='rm f' git diff", "git(1) GIT_EXTERNAL_DIFF"),
    ("GIT_SSH_COMMAND='rm f' git fetch", "git(1) GIT_SSH_COMMAND"),
    ("GIT_ASKPASS='rm f' git status", "git(1) GIT_ASKPASS, by hand"),
    ("GIT_EDITOR='rm f' git status", "git(1) GIT_EDITOR, by hand"),
    # class: configuration through the environment
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm f' git -p log",
     "brief; git-config(1) GIT_CONFIG_COUNT"),
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm f' git x",
     "git-config(1), by hand"),
    ("GIT_CONFIG_PARAMETERS=\"'core.pager'='rm f'\" git -p log", "brief; git.c, by hand"),
    ("GIT_CONFIG_GLOBAL=./evil git status", "git-config(1) GIT_CONFIG_GLOBAL, by hand"),
    ("GIT_DIR=/tmp/other/.git git status", "git(1) GIT_DIR: another repository's config"),
    ("HOME=./evil git log", "git-config(1) ~/.gitconfig, by hand"),
    ("GIT_TRACE=/tmp/trace.txt git status", "git(1) GIT_TRACE writes a file, by hand"),
    # class: pagers, editors, less
    ("PAGER='sh -c \"rm f\"' man ls", "brief; man(1)"),
    ("MANPAGER='rm f' man ls", "man(1) MANPAGER, by hand"),
    ("LESSOPEN='|rm f %s' less README.md", "brief; less(1) LESSOPEN"),
    ("LESS='+!rm f' less README.md", "less(1) LESS, by hand"),
    ("LESSKEYIN=./keys less README.md", "less(1) LESSKEYIN #env, by hand"),
    ("EDITOR='rm f' git commit", "brief"),
    ("VISUAL='rm f' crontab -e", "brief"),
    # class: loader, shell start-up, interpreters
    ("LD_PRELOAD=./x.so ls", "brief; ld.so(8)"),
    ("LD_LIBRARY_PATH=. ls", "ld.so(8), by hand"),
    ("LD_AUDIT=./a.so cat README.md", "ld.so(8) LD_AUDIT, by hand"),
    ("BASH_ENV=./x bash -c 'echo hi'", "brief; bash(1) INVOCATION"),
    ("PS4='$(rm f)' bash -x s.sh", "bash(1) PS4, by hand"),
    ("PERL5OPT=-MEvil perl x.pl", "brief; perlrun(1)"),
    ("NODE_OPTIONS='--require ./x.js' node app.js", "brief; node(1)"),
    ("PYTHONSTARTUP=./x.py python", "brief; python(1)"),
    ("RIPGREP_CONFIG_PATH=./rc rg TODO", "ripgrep GUIDE: --pre in the config file, by hand"),
    ("CURL_HOME=./evil curl https://example.com", "curl(1) .curlrc output, by hand"),
    # class: env(1), sudo(8) and the shell's own state
    ("env GIT_PAGER='rm f' git -p log", "brief; env(1)"),
    ("env -i LESSOPEN='|rm f %s' less README.md", "env(1) -i, by hand"),
    ("export GIT_PAGER='rm f'; git -p log", "brief"),
    ("export GIT_PAGER='rm f' && git -p log", "by hand"),
    ("declare -x GIT_PAGER='rm f'; git -p log", "brief"),
    ("typeset -x LESSOPEN='|rm f %s'; less README.md", "bash(1) typeset, by hand"),
    ("GIT_PAGER='rm f'; export GIT_PAGER; git -p log", "bash(1) export NAME, by hand"),
    ("read GIT_PAGER <<< 'rm f'; export GIT_PAGER; git -p log", "bash(1) read, by hand"),
    ("GIT_PAGER=$CMD git -p log", "by hand: a value only known at run time"),
]

#: Everyday settings that run nothing new: they must not become unanalysable.
INERT = [
    ("GIT_PAGER=cat git log", "Claude Code users' common spelling"),
    ("PAGER=cat git log", "by hand"),
    ("GIT_PAGER= git log -1", "git(1): empty means no pager"),
    ("LESS=-R git log", "by hand"),
    ("GIT_EDITOR=true git rebase --continue", "git(1), scripts"),
    ("GIT_TRACE=1 git status", "git(1): trace to stderr"),
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=t git log",
     "git-config(1)"),
    ("NODE_OPTIONS=--max-old-space-size=4096 npm test", "node(1), everyday"),
    ("export PAGER=cat; git log", "by hand"),
    ("export FOO=bar; ls", "by hand"),
    ("CI=1 npm test", "by hand"),
    ("export -n GIT_PAGER; git log", "bash(1) export -n removes"),
    ("PS4='+ ' bash -x s.sh", "bash(1)"),
]

DENY_RM = ("Bash(rm *)", "Read(./.env)")


def decide(ws: Path, command: str, mode: str = "bypassPermissions") -> str:
    engine = PermissionEngine(make_config(ws, deny=DENY_RM, mode=mode), memo=False)
    return engine.decide("Bash", {"command": command}, cwd=ws).decision


@pytest.mark.parametrize(("command", "source"), RUNS_CODE)
def test_a_variable_that_runs_code_makes_the_command_unanalysable(
    command: str, source: str
) -> None:
    analysis = analyse(command)
    assert not all(c.analysable for c in analysis.commands), source
    assert any("runs it as code" in p for p in analysis.problems), (source, analysis.problems)


@pytest.mark.parametrize(("command", "source"), RUNS_CODE)
@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits", "default"])
def test_bypass_never_allows_code_in_the_environment(
    tmp_path: Path, command: str, source: str, mode: str
) -> None:
    assert decide(tmp_path, command, mode) != "allow", source


@pytest.mark.parametrize(("command", "source"), INERT)
def test_inert_settings_stay_analysable(tmp_path: Path, command: str, source: str) -> None:
    analysis = analyse(command)
    assert not any("runs it as code" in p for p in analysis.problems), (source, analysis.problems)
    assert decide(tmp_path, command) == "allow", source


def test_each_program_names_its_own_variables() -> None:
    # the knowledge is in the program modules; envcode only collects it
    from toolrun.permissions.programs import git, interpreters, less

    assert "GIT_PAGER" in git.CODE_ENV and "LESSOPEN" in less.CODE_ENV
    assert "NODE_OPTIONS" in interpreters.CODE_ENV
    assert envcode.code_reason("GIT_CONFIG_KEY_3", "core.fsmonitor", {}) is not None
    assert envcode.code_reason("GIT_CONFIG_VALUE_0", "x", {"GIT_CONFIG_KEY_0": "user.name"}) is None
    assert envcode.code_reason("GIT_CONFIG_VALUE_0", "x", {}) is not None  # key inherited
    assert envcode.code_reason("LD_BIND_NOW", "1", {}) is not None
    assert envcode.code_reason("RUST_LOG", "debug", {}) is None


def test_the_ordinary_path_costs_nothing() -> None:
    # (no assignment and no env/read: nothing is looked up)
    cmd = analyse("git log --oneline").commands[0]
    assert envcode.problem(cmd.kind, cmd.assignments, cmd.words, cmd.argvs) is None
