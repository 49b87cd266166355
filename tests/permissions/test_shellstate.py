"""Shell state that changes later words is refused or followed (issue 24, point 6).

``shopt -s dotglob; cat *`` printed ``.env``: toolrun expanded ``*`` with bash's default
options. After a change of that state the rest of the line is not analysable; variables
set on their own reach the later commands as if written before each of them.
"""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree, decide
from tests.permissions.programs.helpers import analysable
from toolrun.permissions.bash import analyse

REFUSED = [
    # (command, source)
    ("shopt -s dotglob; cat *", "issue 24 corpus"),
    ("shopt -s nocaseglob; cat .ENV*", "by hand (bash manual: nocaseglob)"),
    ("shopt -s dotglob globstar; grep -r K **", "by hand (bash manual: globstar)"),
    ("shopt -s extglob\ncat config/!(app.yaml)", "bash manual: extglob"),
    ("shopt -s nullglob failglob; ls *.md", "bash manual"),
    ("shopt -s expand_aliases; alias ls=rm\nls x", "bash manual: expand_aliases"),
    ("shopt -u globasciiranges; cat [a-z]*", "bash manual"),
    ("shopt -s $OPT; cat *", "by hand"),
    ("GLOBIGNORE=x; cat config/*", "issue 24 corpus"),
    ("GLOBIGNORE=.:..; cat config/*", "bash manual: GLOBIGNORE sets dotglob"),
    ("IFS=/; cat config/*", "by hand"),
    ("export GLOBIGNORE=x && cat *", "by hand"),
    ("set -f; cat *", "bash manual: set -f"),
    ("set -o noglob; cat *", "bash manual: set -o noglob"),
    ("set +B; cat {a,b}", "bash manual: braceexpand"),
    ("set -k; ls LD_PRELOAD=./x.so", "bash manual: set -k"),
    ("set -a; BASH_ENV=x.sh; bash s.sh", "bash manual: allexport"),
    ("set -o posix; ls", "by hand"),
    ("set -P; cd src/link; cat ../x", "bash manual: set -P"),
    ("set -o $X; cat *", "by hand"),
    ("HOME=/; cd; cat .env", "by hand"),
    ("HOME=/ cd; cat .env", "by hand: a prefix assignment reaches the builtin"),
    ("CDPATH=..; cd config; cat .env", "bash manual: CDPATH"),
    ("OLDPWD=/etc; cd -; cat passwd", "bash manual: OLDPWD"),
    ("PWD=/; cd ..; ls", "by hand"),
    ("PATH=.:$PATH; ls", "by hand"),
    ("export PATH=.; ls", "by hand"),
    ("BASH_ENV=x.sh; bash s.sh", "bash manual: BASH_ENV"),
    ("PS4='$(rm f)'; set -x; ls", "bash manual: PS4"),
    ("BASH_CMDS[ls]=/bin/rm; ls f", "bash manual: BASH_CMDS"),
    ("BASH_ALIASES[ls]='rm'; ls f", "bash manual: BASH_ALIASES"),
    ("read IFS <<< /; cat config/*", "by hand"),
    ("read -r HOME < x; cd; ls", "by hand"),
    ("mapfile BASH_CMDS < x; ls", "by hand"),
    ("printf -v PATH %s .; ls", "by hand"),
    ("printf -vHOME /; cd; ls", "by hand"),
    ("printf $X PATH; ls", "by hand: $X may be -v"),
    ("declare -n r=HOME; r=/; cd", "bash manual: namerefs"),
    ("typeset -n r=PATH; r=.; ls", "bash manual: namerefs"),
    ("declare \"$v\"=1; ls", "by hand"),
    ("unset HOME; cd; ls", "by hand"),
    ("unset $V; ls", "by hand"),
    ("getopts a HOME; cd", "by hand"),
    ("__toolrun_cwd_file=$HOME/.bashrc", "toolrun's EXIT trap writes there"),
    ("read __toolrun_cwd_file <<< ~/.bashrc", "toolrun's EXIT trap writes there"),
    ("printf -v __toolrun_cwd_file %s ~/.profile", "toolrun's EXIT trap writes there"),
    ("declare __toolrun_cwd_file=~/.gitconfig", "toolrun's EXIT trap writes there"),
    ("f(){ rm -rf /; }; f", "by hand: a function defined, then called"),
    ("function f { cat .env; }; f", "by hand"),
    ("pwd() { rm f; }", "by hand: toolrun's trap runs pwd"),
    ("alias x='rm f'", "bash manual"),
    ("hash -p /bin/rm ls; ls f", "bash manual: hash -p"),
    ("enable -n echo; echo hi", "bash manual: enable"),
    ("enable -f ./evil.so x", "bash manual: enable -f"),
]


@pytest.mark.parametrize(("command", "source"), REFUSED)
def test_state_changes_before_later_words_are_refused(command: str, source: str) -> None:
    assert not analysable(command), source


@pytest.mark.parametrize(("command", "source"), REFUSED[:8])
def test_bypass_with_read_denies_asks(tree: Tree, command: str, source: str) -> None:
    decision = decide(tree, "Bash", {"command": command}, deny=["Read(./.env)"],
                      mode="bypassPermissions")
    assert decision.decision != "allow", (source, decision.reason)


HARMLESS = [
    "set -euo pipefail; ls", "set -e; git status", "set -x; ls", "set -o pipefail; ls",
    "set -eu -o pipefail; cat README.md", "set +e; ls", "set -- a b; ls", "shopt -q dotglob; ls",
    "shopt dotglob; ls", "shopt -p; ls", "ls; shopt -s dotglob", "cat *; GLOBIGNORE=x",
    "x=1; echo $x", "export NODE_ENV=test; npm test", "read -r line < README.md; echo ok",
    "printf '%s\\n' a; ls", "unset FOO; ls", "declare -i n=1; ls", "hash -r; ls", "cd src; ls",
    "export -n FOO; ls",  # (export -n un-exports: not a nameref)
]


@pytest.mark.parametrize("command", HARMLESS)
def test_state_that_changes_no_later_word_stays_analysable(command: str) -> None:
    assert analysable(command), analyse(command).problems


def test_a_variable_set_on_its_own_reaches_later_commands_as_their_env() -> None:
    commands = analyse("LESSOPEN='|rm f %s'; less README.md").commands
    less = commands[-1]
    assert less.unsafe_env == ("LESSOPEN='|rm f %s'",)
    assert less.allow_form == "LESSOPEN='|rm f %s' less README.md"


def test_an_exported_variable_reaches_later_commands_too() -> None:
    commands = analyse("export GIT_EXTERNAL_DIFF=./x && git diff").commands
    assert commands[-1].unsafe_env == ("GIT_EXTERNAL_DIFF=./x",)


def test_safe_variables_do_not_reach_later_commands() -> None:
    assert analyse("export NODE_ENV=test; npm test").commands[-1].unsafe_env == ()


def test_an_allow_rule_does_not_match_through_a_variable_set_before(tree: Tree) -> None:
    decision = decide(tree, "Bash", {"command": "LESSOPEN='|rm f'; less README.md"},
                      allow=["Bash(less *)", "Bash(LESSOPEN='|rm f')"])
    assert decision.decision == "ask"


GROUPS = [
    # (command, source)
    ("{ cat README.md; }", "issue 24 corpus"),
    ("{ cat README.md; ls; }", "by hand"),
    ("{ cat README.md && ls src; } 2>/dev/null", "by hand"),
    ("{ cat README.md; } | grep x", "by hand"),
    ("( cat README.md )", "by hand"),
    ("( cat README.md; ls ) | wc -l", "by hand"),
    ("{ ls; { cat README.md; }; }", "by hand"),
]


@pytest.mark.parametrize(("command", "source"), GROUPS)
def test_groups_of_read_only_commands_are_allowed(tree: Tree, command: str, source: str
                                                   ) -> None:
    decision = decide(tree, "Bash", {"command": command})
    assert decision.decision == "allow", (source, decision.reason)


@pytest.mark.parametrize("command", [
    "{ cat README.md; } > out.txt", "{ ls; cat README.md; } > out.txt", "( ls ) >> out.txt",
    "{ cat .env; }", "{ ls && cat .env; } 2>/dev/null",
])  # fmt: skip
def test_a_group_is_checked_command_by_command(tree: Tree, command: str) -> None:
    decision = decide(tree, "Bash", {"command": command}, deny=["Read(./.env)"])
    assert decision.decision != "allow", decision.reason


def test_a_groups_redirection_reaches_every_command_inside() -> None:
    commands = analyse("{ ls; cat README.md; } > out.txt").commands
    assert [c.name for c in commands] == ["ls", "cat"]
    assert all(any(r.writes for r in c.redirects) for c in commands)


def test_a_cd_in_a_group_moves_the_shell_and_in_a_subshell_does_not() -> None:
    assert analyse("{ cd src; }; ls").commands[0].top_level
    assert not analyse("( cd src ); ls").commands[0].top_level
