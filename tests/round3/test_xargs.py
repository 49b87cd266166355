"""``xargs`` into a reader, run for real: its stdin words are reads toolrun cannot check.

Under the scene's ``deny: Read(./.env)``, ``find`` prints ``./.env`` and grep would read
it; without Read rules ``Bash(grep *)`` allows the same pipeline (Claude Code strips a bare
``xargs``). Sources: Claude Code docs (bare xargs), by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.round3.scene import DENY_SECRETS, Scene

ALLOW = "  allow: ['Bash(find *)', 'Bash(grep *)', 'Bash(ls *)', 'Bash(git ls-files)']\n"


@pytest.mark.parametrize("command", [
    "find . -name '.env' | xargs grep SECRET",
    "git ls-files | xargs grep -h SECRET",
    "ls -A | xargs grep -s SECRET",
    "echo --file=.env | xargs grep x README.md",
])  # fmt: skip
def test_xargs_into_grep_never_reads_past_a_read_deny(tmp_path: Path, command: str) -> None:
    scene = Scene.make(tmp_path)
    scene.config(DENY_SECRETS + ALLOW)
    _, results = scene.run([command], mode="bypassPermissions")
    assert results[0]["status"] != "ok", results[0]
    assert scene.leaked(results) == []
    assert scene.changed() == []


def test_without_read_rules_the_rule_allows_it_and_it_runs(tmp_path: Path) -> None:
    scene = Scene.make(tmp_path)
    scene.config("permissions:\n" + ALLOW)
    _, results = scene.run(["find src -name '*.py' | xargs grep -l print"])
    assert results[0]["status"] == "ok", results[0]
    assert results[0]["output"].strip() == "src/main.py"
