"""Words that are not fixed strings are never trusted as flags or program names (point 2)."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree, decide
from toolrun.permissions.readonly import is_read_only_command


@pytest.mark.parametrize("command", [
    "ls $DIR", "ls \"$DIR\"", "ls $(echo -la)", "ls {-a,-l}", "ls -{a,R}", "head -$N src/a.py",
    "cat $((1))", "sort *", "test $x", "printf $fmt", "grep -r${X} a .",
])  # fmt: skip
def test_expanded_words_make_a_command_not_read_only(tree: Tree, command: str) -> None:
    assert not is_read_only_command(command, tree.ws, tree.ws)


def test_echo_options_are_harmless_so_expansions_stay_read_only(tree: Tree) -> None:
    assert is_read_only_command('echo $HOME "$x"', tree.ws, tree.ws)


def test_a_glob_that_cannot_become_an_option_stays_read_only_and_says_why(tree: Tree) -> None:
    decision = decide(tree, "Bash", {"command": "ls *.md"})
    assert decision.decision == "allow"
    assert "cannot become an option" in decision.reason


def test_a_glob_after_a_file_creating_part_is_not_trusted(tree: Tree) -> None:
    call = {"command": "touch ./-delete; find . *"}
    rules = ("Bash(touch *)", "Bash(find *)")
    assert decide(tree, "Bash", call, allow=rules).decision == "ask"


@pytest.mark.parametrize("command", ["find . -del*", "ls -[a]", "sort -o*"])
def test_a_glob_starting_with_a_dash_is_never_trusted(tree: Tree, command: str) -> None:
    assert not is_read_only_command(command, tree.ws, tree.ws)


@pytest.mark.parametrize("command", [
    "cat ~root/x", "cat ~+/../x", "cat ~-/x", "cat ~1/x", "cat ~+1/x", "ls ~root",
    "cat ~/.bashrc",
])  # fmt: skip
def test_tilde_forms_are_expanded_as_bash_does_or_refused(tree: Tree, command: str) -> None:
    assert not is_read_only_command(command, tree.ws, tree.ws)


def test_quoted_tilde_is_a_file_named_tilde(tree: Tree) -> None:
    assert is_read_only_command("cat '~root'/x", tree.ws, tree.ws)
    assert is_read_only_command('cat ~"root"/x', tree.ws, tree.ws)


@pytest.mark.parametrize("command", [
    "echo x > ~+/../x", "rm -rf ~+/../dir", "touch ~root/x", "dd if=/dev/zero of=~/x",
])  # fmt: skip
def test_tilde_writes_outside_the_workspace_are_not_allowed(tree: Tree, command: str) -> None:
    call = {"command": command}
    assert decide(tree, "Bash", call, mode="acceptEdits").decision != "allow"
    assert decide(tree, "Bash", call, allow=("Bash(echo *)",)).decision != "allow"


def test_explain_names_the_word_and_why(tree: Tree) -> None:
    decision = decide(tree, "Bash", {"command": "find . -{delete,print}"}, allow=("Bash(find *)",))
    assert decision.decision == "ask"
    assert "-{delete,print}" in decision.reason and "option" in decision.reason


@pytest.mark.parametrize("command", ["rm -rf ~-", "rm -rf ~1", "rm -rf ~+/..", "rm -rf ~root"])
def test_rm_of_a_tilde_form_is_critical_or_unknown_even_under_bypass(
    tree: Tree, command: str
) -> None:
    assert decide(tree, "Bash", {"command": command}, mode="bypassPermissions").decision == "ask"


def test_printf_arguments_after_a_literal_format_may_be_expansions(tree: Tree) -> None:
    assert is_read_only_command("printf '%s\\n' \"$x\" $y", tree.ws, tree.ws)
    assert not is_read_only_command('printf "$fmt" x', tree.ws, tree.ws)
    assert not is_read_only_command("printf $opt PATH x", tree.ws, tree.ws)


def test_explain_says_why_a_tilde_form_is_refused(tree: Tree) -> None:
    assert "$OLDPWD" in decide(tree, "Bash", {"command": "cat ~-/x"}).reason
    assert "directory stack" in decide(tree, "Bash", {"command": "cat ~2/x"}).reason
    assert "/root/x is outside" in decide(tree, "Bash", {"command": "cat ~root/x"}).reason


@pytest.mark.parametrize(
    "command", ["(cd .. && rm -rf proj)", "(cd / && rm -rf home)", "ls | cd ..; rm -rf proj"]
)
def test_rm_after_a_cd_toolrun_cannot_follow_asks_even_under_bypass(
    tree: Tree, command: str
) -> None:
    assert decide(tree, "Bash", {"command": command}, mode="bypassPermissions").decision == "ask"
    assert decide(tree, "Bash", {"command": "cd .. && rm -rf x"},
                  mode="bypassPermissions").decision == "allow"


@pytest.mark.parametrize(
    "command", ["cp -t /etc x", "cp -rt /etc x", "cp --target-directory=/etc x", "mv -t /etc x",
                "install -t/usr/local/bin x", "ln -st /etc x"]
)  # fmt: skip
def test_a_target_directory_option_is_the_write(tree: Tree, command: str) -> None:
    assert decide(tree, "Bash", {"command": command}, mode="acceptEdits").decision == "ask"
    assert decide(tree, "Bash", {"command": command}, deny=("Edit(//etc/**)",
                  "Edit(//usr/**)")).decision == "deny"
