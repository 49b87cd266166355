"""awk: system(), pipes, getline, @include/@load are code the command runs."""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree, decide
from tests.permissions.programs.helpers import analysable, read_only


@pytest.mark.parametrize("command", [
    "awk 'BEGIN{system(\"rm x\")}'", "awk '{ print | \"sh\" }' f", "awk '{ \"date\" | getline d }'",
    "awk '@include \"x.awk\"'", "gawk '@load \"ext\"'", "awk '{ print |& \"cat\" }' f",
    "awk -F: 'BEGIN { system(\"id\") }' f", "mawk 'BEGIN{system(\"x\")}'",
])  # fmt: skip
def test_code_running_programs_are_not_analysable(command: str) -> None:
    assert not analysable(command)


def test_plain_programs_stay_analysable_and_a_write_is_not_read_only(tree: Tree) -> None:
    assert analysable("awk '{print $1}' README.md")
    call = {"command": "awk '{print > \"out\"}' README.md"}
    assert decide(tree, "Bash", call, allow=()).decision == "ask"


@pytest.mark.parametrize(
    "command",
    ["awk '{print $1}' README.md", "awk -F: '/x/ {print $2}' README.md", "awk 'BEGIN {print 1}'"],
)
def test_plain_awk_is_read_only(tree: Tree, command: str) -> None:
    assert read_only(tree, command)


@pytest.mark.parametrize(
    "command",
    [
        "awk '{print > \"out\"}' README.md",
        'awk \'{printf "%s", $0 >> "f"}\' README.md',
        "awk 'BEGIN{ARGV[1]=\"/etc/passwd\"; ARGC=2} {print}'",
        "awk -f prog.awk README.md",
        "awk '{print}' /etc/passwd",
        "awk $P README.md",
    ],
)
def test_awk_that_writes_or_picks_its_files_is_not_read_only(tree: Tree, command: str) -> None:
    assert not read_only(tree, command)
