"""``xargs PROGRAM``: the words xargs adds come from standard input (issue 24).

For a program whose options can only read (grep, diff), those words are reads toolrun
cannot check: fine without Read rules (Claude Code strips a bare ``xargs``), never allowed
while a Read deny or ask rule exists. A program whose options write or run stays refused.
"""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree, decide

READERS = [
    # (command, source)
    ("find . -name '*.py' | xargs grep foo", "Claude Code docs (bare xargs is stripped)"),
    ("git ls-files | xargs grep -n TODO", "by hand"),
    ("ls | xargs grep -l x", "by hand"),
    ("find src -type f | xargs diff -q README.md", "by hand"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "source"), READERS)
def test_xargs_into_a_reader_is_allowed_by_its_rule_without_read_rules(
    tree: Tree, command: str, source: str
) -> None:
    decision = decide(tree, "Bash", {"command": command},
                      allow=["Bash(find *)", "Bash(git ls-files)", "Bash(ls)", "Bash(grep *)",
                             "Bash(diff *)"])
    assert decision.decision == "allow", (source, decision.reason)


@pytest.mark.parametrize(("command", "source"), READERS)
@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_xargs_into_a_reader_is_never_allowed_past_a_read_deny(
    tree: Tree, command: str, source: str, mode: str
) -> None:
    # `echo --file=.env | xargs grep x`, or find printing ./.env: grep reads it
    decision = decide(tree, "Bash", {"command": command}, mode=mode, deny=["Read(./.env)"],
                      allow=["Bash(find *)", "Bash(git ls-files)", "Bash(ls)", "Bash(grep *)",
                             "Bash(diff *)"])
    assert decision.decision != "allow", (source, decision.reason)
    assert any("standard input" in p for p in decision.protected), decision.reason


@pytest.mark.parametrize("command", ["echo x | xargs sort", "ls | xargs sed -n p",
                                     "ls | xargs find", "ls | xargs git log"])
def test_xargs_into_a_program_whose_options_write_or_run_is_not_allowed(
    tree: Tree, command: str
) -> None:
    decision = decide(tree, "Bash", {"command": command}, allow=["Bash(*)"])
    assert decision.decision != "allow", decision.reason
