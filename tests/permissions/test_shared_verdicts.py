"""The read-only verdict of a Bash command is worked out once for both the grouping of calls
into runs (``is_read_only_command``) and the decision, and remembered: only for the same
command, directory, home and boundary, and only while what it read from the disk reads
the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.permissions.conftest import make_config
from toolrun.permissions import PermissionEngine, is_read_only_command
from toolrun.permissions.readonly import is_read_only_in


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x\n")
    (ws / "a.py").write_text("x\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    return ws


def _decide(engine: PermissionEngine, command: str, cwd: Path) -> tuple[str, str]:
    decision = engine.decide("Bash", {"command": command}, cwd=cwd)
    return decision.decision, decision.reason


@pytest.mark.parametrize("first", ["inside", "outside"])
def test_the_same_command_in_another_directory_is_not_given_the_others_verdict(
    ws: Path, tmp_path: Path, first: str
) -> None:
    inside, outside = ws / "src", tmp_path
    order = [inside, outside] if first == "inside" else [outside, inside]
    seen = {cwd: is_read_only_command("cat ../outside.txt", cwd, ws) for cwd in order}
    # from src/ the file is ws/outside.txt (inside, missing); from tmp_path/.. it is outside
    assert seen == {inside: True, outside: False}
    engine = PermissionEngine(make_config(ws))
    assert _decide(engine, "cat ../outside.txt", inside)[0] == "allow"
    assert _decide(engine, "cat ../outside.txt", outside)[0] == "ask"


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("cat ../a.py", False),  # from ws: outside
        ("cd src && cat ../a.py", True),  # after the cd: ws/a.py
        ("cd src; cat ../../outside.txt", False),
        ("cd src && cat ../../outside.txt", False),
    ],
)
def test_a_cd_earlier_in_the_command_moves_where_later_paths_lead(
    ws: Path, command: str, read_only: bool
) -> None:
    assert is_read_only_command("cd src && cat ../a.py", ws, ws)  # another command, cached
    assert is_read_only_command(command, ws, ws) is read_only
    decision = PermissionEngine(make_config(ws)).decide("Bash", {"command": command}, cwd=ws)
    assert (decision.decision == "allow") is read_only


def test_a_wider_boundary_is_not_given_the_workspace_verdict(ws: Path, tmp_path: Path) -> None:
    command = f"cat {tmp_path}/outside.txt"
    assert not is_read_only_command(command, ws, ws)
    assert is_read_only_in(command, ws, [ws, tmp_path])
    assert not is_read_only_command(command, ws, ws)
    wide = PermissionEngine(make_config(ws, additional=[tmp_path]))
    assert _decide(wide, command, ws)[0] == "allow"
    assert _decide(PermissionEngine(make_config(ws)), command, ws)[0] == "ask"


def test_a_retargeted_symlink_is_checked_again_by_both(ws: Path, tmp_path: Path) -> None:
    link = ws / "notes"
    link.symlink_to(ws / "a.py")
    engine = PermissionEngine(make_config(ws))
    assert is_read_only_command("cat notes", ws, ws)
    for _ in range(3):  # seen, remembered, answered from memory
        assert _decide(engine, "cat notes", ws)[0] == "allow"
    link.unlink()
    link.symlink_to(tmp_path / "outside.txt")
    assert not is_read_only_command("cat notes", ws, ws)
    decision, reason = _decide(engine, "cat notes", ws)
    assert decision == "ask"
    assert "outside the workspace" in reason


def test_a_remembered_decision_notes_the_reads_of_a_verdict_made_for_grouping(
    ws: Path, tmp_path: Path
) -> None:
    # The verdict comes from the grouping step; the decision that reuses it must still be
    # re-checked against the symlink it read, or memory would answer after the retarget.
    link = ws / "notes"
    link.symlink_to(ws / "a.py")
    engine = PermissionEngine(make_config(ws))
    assert is_read_only_command("head notes", ws, ws)
    for _ in range(3):
        assert _decide(engine, "head notes", ws)[0] == "allow"
    link.unlink()
    link.symlink_to(tmp_path / "outside.txt")
    assert _decide(engine, "head notes", ws)[0] == "ask"
    assert not is_read_only_command("head notes", ws, ws)


@pytest.mark.parametrize("name", ["-n", "--version", "-delete"])
def test_a_new_file_a_glob_matches_is_seen(ws: Path, name: str) -> None:
    assert is_read_only_command("cat *", ws / "src", ws)
    (ws / "src" / name).write_text("x\n")
    assert not is_read_only_command("cat *", ws / "src", ws)
    engine = PermissionEngine(make_config(ws))
    assert _decide(engine, "cat *", ws / "src")[0] == "ask"


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("ls $((1+", "Bash(ls *)"),  # does not parse
        ("echo $(( x[$(id)] ))", "Bash(echo *)"),  # arithmetic that runs a command
        ("ls; coproc ls", "Bash(ls *)"),
        ("eval ls", "Bash(eval *)"),
    ],
)
def test_a_command_that_cannot_be_analysed_stays_unsafe_and_unallowed(
    ws: Path, command: str, rule: str
) -> None:
    for _ in range(2):  # fresh, then from memory
        assert not is_read_only_command(command, ws, ws)
    engine = PermissionEngine(make_config(ws, allow=[rule]))
    for _ in range(3):
        decision = engine.decide("Bash", {"command": command}, cwd=ws)
        assert decision.decision != "allow"
        assert "cannot be analysed" in decision.reason


def test_decisions_are_the_same_whether_grouping_saw_the_command_first(
    ws: Path, tmp_path: Path
) -> None:
    commands = [
        "cat src/a.py", "cat ../outside.txt", "ls > out.txt", "cat a.py > /dev/null",
        "cd src && ls", "grep -r x . | head", "find . -name '*.py'", "echo hi >> log",
        "[ -f a.py ] > f", "git status", "rm -rf src",
    ]  # fmt: skip
    fresh = PermissionEngine(make_config(ws, allow=["Bash(ls *)"]), memo=False)
    primed = PermissionEngine(make_config(ws, allow=["Bash(ls *)"]), memo=False)
    expected = [fresh.decide("Bash", {"command": c}, cwd=ws) for c in commands]
    for command in commands:
        is_read_only_command(command, ws, ws)
    got = [primed.decide("Bash", {"command": c}, cwd=ws) for c in commands]
    for want, have in zip(expected, got, strict=True):
        assert (have.decision, have.reason, have.decided_by) == (
            want.decision, want.reason, want.decided_by,
        )
        assert have.subcommands == want.subcommands
        assert have.trace() == want.trace()
