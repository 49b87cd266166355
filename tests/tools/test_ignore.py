"""Gitignore patterns through pathspec, with ripgrep's {a,b} alternatives on top."""

from __future__ import annotations

import pytest

from toolrun.tools.builtins._ignore import RuleSet, Verdict, expand_braces


@pytest.mark.parametrize(
    ("pattern", "expanded"),
    [
        ("*.{py,md}", ["*.py", "*.md"]),
        ("!{a,b}/{c,d}", ["!a/c", "!a/d", "!b/c", "!b/d"]),
        ("x{a,{b,c}}", ["xa", "xb", "xc"]),
        (r"\{a,b\}", [r"\{a,b\}"]),  # escaped: literal braces
        ("{unclosed", ["{unclosed"]),
        ("# {a,b}", ["# {a,b}"]),  # a comment stays one
    ],
)
def test_braces_expand_like_ripgrep(pattern: str, expanded: list[str]) -> None:
    assert expand_braces(pattern) == expanded


def test_the_last_matching_pattern_wins() -> None:
    rules = RuleSet.parse("/ws", ["*.log", "!keep.log", "build/", "/top.txt", "*.{tmp,bak}"])
    assert rules.match("x.log", False) is Verdict.IGNORE
    assert rules.match("sub/keep.log", False) is Verdict.WHITELIST
    assert rules.match("build", True) is Verdict.IGNORE
    assert rules.match("build", False) is None  # a trailing / matches folders only
    assert rules.match("top.txt", False) is Verdict.IGNORE
    assert rules.match("sub/top.txt", False) is None  # a leading / anchors
    assert rules.match("a/b.bak", False) is Verdict.IGNORE
    assert rules.match("notes.md", False) is None


def test_a_folder_match_does_not_cover_its_files() -> None:
    # ripgrep checks each level; pruning the folder is the walker's business
    rules = RuleSet.parse("/ws", [".*"])
    assert rules.match(".hidden", True) is Verdict.IGNORE
    assert rules.match(".hidden/needle.md", False) is None
    assert rules.has_plain and not RuleSet.parse("/ws", ["!*.txt"]).has_plain
