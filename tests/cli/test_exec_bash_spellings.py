"""Bash spellings that an allow rule must not carry, run for real through ``toolrun exec``.

Two mechanisms changed for speed and safety in issue 17: plain commands are read
without tree-sitter (``permissions/bash_simple``), and the fidelity check now looks at
the text before and after the parse's root. Each test gives the rules an allowed
program, writes a command that smuggles another one in, runs the plan and looks at the
disk: what the rule did not name never ran.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.attack_support import Arena, results_of

ALLOW_GIT_STATUS = "permissions:\n  allow: ['Bash(git status)', 'Bash(git status *)']\n"
ALLOW_ECHO = "permissions:\n  allow: ['Bash(echo *)']\n"


def run(arena: Arena, command: str, path: str | None = None) -> dict[str, object]:
    arena.plan("p.json", [{"tool": "Bash", "input": {"command": command}}])
    env = arena.env()
    if path is not None:
        env["PATH"] = f"{path}:{env['PATH']}"
    done = subprocess.run(arena.command("p.json"), env=env, capture_output=True, text=True,
                          check=False, timeout=120, cwd=arena.ws)
    assert done.returncode in (0, 1, 4, 5), done.stderr
    [result] = results_of(done.stdout)
    return result


@pytest.mark.parametrize(
    "command", [" - CI=1 git status", "\\ CI=1 git status", "  -   CI=1 git status --short"]
)
def test_a_first_word_the_parse_drops_does_not_run_under_a_git_status_rule(
    tmp_path: Path, command: str
) -> None:
    arena = Arena.make(tmp_path)
    arena.config(ALLOW_GIT_STATUS)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    marker = tmp_path / "ran"
    for name in ("-", " CI=1"):  # what bash would run instead of git
        program = bindir / name
        program.write_text(f"#!/bin/sh\necho \"$@\" > '{marker}'\n")
        program.chmod(0o755)
    result = run(arena, command, path=str(bindir))
    assert result["status"] != "ok", result
    assert not marker.exists()


@pytest.mark.parametrize(
    "command",
    [
        "echo a;rm -f a.txt",
        "echo a && rm -f a.txt",
        "echo a || rm -f a.txt; rm -f a.txt",
        "echo 'a' \"b\"|rm -f a.txt",
        "echo a|cat|rm -f a.txt",
        "A=1 rm -f a.txt",
        "echo a; rm -f a.txt ;",
    ],
)
def test_a_second_command_after_an_allowed_echo_does_not_run(
    tmp_path: Path, command: str
) -> None:
    arena = Arena.make(tmp_path)
    arena.config(ALLOW_ECHO)
    result = run(arena, command)
    assert result["status"] != "ok", result
    assert (arena.ws / "a.txt").read_text() == "alpha\n"


def test_the_allowed_plain_command_itself_runs(tmp_path: Path) -> None:
    # the other side: the fast reading still lets the rule allow what it names
    arena = Arena.make(tmp_path)
    arena.config(ALLOW_ECHO)
    result = run(arena, "echo 'plain' words")
    assert result["status"] == "ok", result
    assert result["output"] == "plain words\n"
    assert os.path.exists(arena.ws / "a.txt")
