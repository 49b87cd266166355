"""Differential test against real bash (issue 9 point 9): whenever bash ran the marker,
toolrun did not allow the command under ``deny: ["Bash(marker *)"]`` (default mode,
bypassPermissions, and with allow rules for every other program the grammar uses). A
bounded run; ``bench/differential_bash.py --count N`` runs longer."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.permissions.shell_grammar import commands, make_bin, run_one

_counter = itertools.count()


@pytest.fixture(scope="module")
def bindir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bin(tmp_path_factory.mktemp("marker"))


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(command=commands)
def test_bash_never_runs_the_marker_when_toolrun_allowed(
    command: str, bindir: Path, tmp_path: Path
) -> None:
    outcome = run_one(command, tmp_path / f"s{next(_counter)}", bindir)
    assert not outcome.unsafe, outcome


@pytest.mark.parametrize("command", [
    "marker a", "\\marker", "m'ark'er", "echo hi\n\\marker", "{marker,}", "$'\\x6darker'",
    "echo x | sed '1e marker'", "trap marker EXIT", "cat <<EOF | marker\nx\nEOF",
    "env marker", "x='a[$(marker)]'; [[ $x -eq 1 ]]", "find . -maxdepth 0 -exec marker \\;",
])  # fmt: skip
def test_the_marker_really_runs_and_is_never_allowed(
    command: str, bindir: Path, tmp_path: Path
) -> None:
    outcome = run_one(command, tmp_path, bindir)
    assert outcome.ran_marker, command  # the harness sees bash run it
    assert not outcome.unsafe, outcome


def test_safe_commands_are_still_allowed(bindir: Path, tmp_path: Path) -> None:
    outcome = run_one("echo hi && ls", tmp_path, bindir)
    assert not outcome.ran_marker and outcome.default == "allow"
