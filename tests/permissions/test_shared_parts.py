"""A plain part of a command line is read once and shared by every command that holds it
(``bash._PLAIN_PARTS``), and its read-only verdict remembered per place
(``readonly._part_verdicts``): the same analysis and verdicts as reading it afresh, its
problems in every command that holds it, and a verdict that what it read changes is
worked out again."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.permissions import bash, is_read_only_command, readonly


def _fresh(command: str) -> bash.BashAnalysis:
    bash._PLAIN_PARTS.clear()
    return bash._analyse(command, 0)


@pytest.mark.parametrize(
    ("part", "problem"),
    [
        ("eval ls", "eval runs a string as a command"),
        ("sh -c ls", "sh -c runs a string as a command"),
        ("python3 -c print", "python3"),
        ("bash -c ls", "bash -c runs a string as a command"),
    ],
)
def test_a_shared_part_s_problems_are_in_every_command_that_holds_it(
    part: str, problem: str
) -> None:
    bash._PLAIN_PARTS.clear()
    commands = [f"{part} && ls a", f"{part} && ls b", f"ls c | {part}", f"{part}; {part}"]
    for command in commands:
        got = bash._analyse(command, 0)
        assert any(problem in p for p in got.problems), (command, got.problems)
        assert len(got.problems) == len(set(got.problems))  # once, however often it stands
        assert not all(c.analysable for c in got.commands)
        want = _fresh(command)
        assert (got.commands, got.problems) == (want.commands, want.problems)


@pytest.mark.parametrize(
    "command",
    [
        "git log -n 3 --oneline && ls src | head -2",
        "ls src | head -2 && git log -n 3 --oneline",  # the same parts, other places
        "head -2 src/a.py | wc -l; head -2 src/a.py",
        "X=1 ls a && ls a",  # an assignment carried to the part after it
        "ls a || ls a | grep x",
    ],
)
def test_a_shared_part_reads_as_it_does_alone(command: str) -> None:
    bash._PLAIN_PARTS.clear()
    for other in ("git log -n 3 --oneline", "ls src", "head -2", "ls a", "grep x | ls a"):
        bash._analyse(other, 0)  # its parts read first, in other places
    got = bash._analyse(command, 0)
    want = _fresh(command)
    assert (got.commands, got.problems) == (want.commands, want.problems)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    return ws


@pytest.mark.parametrize("name", ["-n", "--help", "-delete", "-f"])
def test_a_shared_glob_part_sees_a_new_file_it_matches(ws: Path, name: str) -> None:
    readonly._part_verdicts.clear()
    assert is_read_only_command("cat * && ls a", ws / "src", ws)
    (ws / "src" / name).write_text("x\n")
    # another command, the same part: its remembered verdict is checked against its reads
    assert not is_read_only_command("cat * && ls b", ws / "src", ws)


@pytest.mark.parametrize("part", ["cat notes", "head notes", "wc -l notes", "grep x notes"])
def test_a_shared_part_through_a_retargeted_symlink_is_checked_again(
    ws: Path, tmp_path: Path, part: str
) -> None:
    readonly._part_verdicts.clear()
    link = ws / "notes"
    link.symlink_to(ws / "src" / "a.py")
    assert is_read_only_command(f"{part} && ls a", ws, ws)
    link.unlink()
    link.symlink_to(tmp_path / "outside.txt")
    assert not is_read_only_command(f"{part} && ls b", ws, ws)
    assert not is_read_only_command(f"ls c; {part}", ws, ws)


def test_a_check_looks_up_each_directory_s_git_repository_once(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolrun.permissions.paths import frozen_tree
    from toolrun.permissions.programs import git

    walks: list[str] = []
    real = git._walk_up

    def counting(directory: str) -> str | None:
        walks.append(directory)
        return real(directory)

    monkeypatch.setattr(git, "_walk_up", counting)
    src = str(ws / "src")
    with frozen_tree():  # a check: nothing runs, the tree cannot change
        assert [git.repository(src) for _ in range(3)] == [None] * 3
        assert git.repository(str(ws)) is None
    assert walks == [src, str(ws)]
    # outside a check (exec: calls run in between) every lookup walks: a new .git is seen
    (ws / ".git").mkdir()
    assert git.repository(src) == str(ws)
    assert walks == [src, str(ws), src]
