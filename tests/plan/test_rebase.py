"""Rebasing a recorded session's paths onto the workspace: only what is plainly below the
recorded directory moves, and no ``..`` can be carried across."""

from __future__ import annotations

import pytest

from toolrun.plan.rebase import Rebase, usable_root

R = Rebase("/home/dev/proj", "/ws/checkout")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("/home/dev/proj", "/ws/checkout"),
        ("/home/dev/proj/src/app.py", "/ws/checkout/src/app.py"),
        ("/home/dev/proj/./src//a.py", "/ws/checkout/./src//a.py"),
        ("/home/dev/proj/src/**/*.py", "/ws/checkout/src/**/*.py"),  # a Glob pattern
    ],
)
def test_paths_below_the_recorded_cwd_move_below_the_workspace(given: str, expected: str) -> None:
    assert R.path(given) == expected


@pytest.mark.parametrize(
    "given",
    [
        "/home/dev/proj2/x",  # a sibling sharing the prefix
        "/home/dev/other/x",
        "/home/dev/proj/../shared/x",  # would climb from the workspace instead
        "/home/dev/proj/src/../../shared/x",
        "/home/dev/proj/..",
        "src/app.py",  # relative: already relative to the workspace
        "~/proj/x",
    ],
)
def test_paths_not_plainly_below_stay_as_recorded(given: str) -> None:
    assert R.path(given) is None


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cd /home/dev/proj/src && ls", "cd /ws/checkout/src && ls"),
        ("git diff > /home/dev/proj/out.txt", "git diff > /ws/checkout/out.txt"),
        ("git diff 2>/home/dev/proj/err", "git diff 2>/ws/checkout/err"),
        ("pytest --rootdir=/home/dev/proj", "pytest --rootdir=/ws/checkout"),
        ("cat '/home/dev/proj/a.txt' \"/home/dev/proj/b\"", "cat '/ws/checkout/a.txt' \"/ws/checkout/b\""),
        ("cd /home/dev/proj; make", "cd /ws/checkout; make"),
        ("(cd /home/dev/proj/lib)|wc", "(cd /ws/checkout/lib)|wc"),
    ],
)
def test_whole_literal_words_in_commands_are_rebased(command: str, expected: str) -> None:
    assert R.command(command) == expected


@pytest.mark.parametrize(
    "command",
    [
        "cat /home/dev/proj/../shared/x",
        'cat "/home/dev/proj/ /../../shared/x"',  # quoted blank: the word goes on
        'cat /home/dev/proj/.""./shared/x',  # quotes splice a ..
        "cat /home/dev/proj/$UP/shared/x",  # an expansion could be ..
        "cat /home/dev/proj/\\.\\./shared",  # escapes
        "cat /home/dev/proj/{..,x}/shared",  # brace expansion
        "cat /home/dev/proj/.*/shared",  # a glob matching ..
        "cat /home/dev/proj2/x",
        'cat x"/home/dev/proj"',  # the middle of a word
        "cat a/home/dev/proj/x",
        "echo '/home/dev/proj'x",
    ],
)
def test_words_that_could_hide_a_climb_are_left_alone(command: str) -> None:
    assert R.command(command) == command


def test_a_workspace_that_needs_quoting_is_never_spliced_into_a_command() -> None:
    odd = Rebase("/home/dev/proj", "/ws/my checkout")
    assert odd.command("cat /home/dev/proj/a") == "cat /home/dev/proj/a"
    assert odd.path("/home/dev/proj/a") == "/ws/my checkout/a"  # an input field needs none


@pytest.mark.parametrize("recorded", ["/", "//", "relative/dir", "/home/../etc", "/home/./x", ""])
def test_roots_that_cannot_be_mapped(recorded: str) -> None:
    assert usable_root(recorded) is None


def test_a_root_keeps_no_trailing_slash() -> None:
    assert usable_root("/home/dev/proj/") == "/home/dev/proj"


WINDOWS = Rebase("e:/Workspace/shop", "/ws/checkout")


@pytest.mark.parametrize(
    ("recorded", "root"),
    [
        ("e:\\Workspace\\shop", "e:/Workspace/shop"),  # the spelling
        ("E:/Workspace/shop", "e:/Workspace/shop"),
        ("e:\\Workspace\\shop\\", "e:/Workspace/shop"),
        ("C:\\Users\\dev", "c:/Users/dev"),
        ("C:\\", None),  # a whole drive would move every path on it
        ("e:\\Workspace\\..\\shop", None),
        ("\\\\server\\share", None),  # a UNC share: kept as recorded
    ],
)
def test_a_windows_cwd_is_a_root_in_one_spelling(recorded: str, root: str | None) -> None:
    assert usable_root(recorded) == root


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("e:\\Workspace\\shop\\src\\app.py", "/ws/checkout/src/app.py"),
        ("E:/Workspace/shop/.env", "/ws/checkout/.env"),
        ("e:\\workspace\\SHOP\\a.txt", "/ws/checkout/a.txt"),  # Windows ignores case
        ("e:\\Workspace\\shop", "/ws/checkout"),
        ("e:\\Workspace\\shop2\\x", None),
        ("e:\\Workspace\\shop\\..\\other\\x", None),
        ("/home/dev/shop/x", None),  # a POSIX path is nothing under a Windows root
        ("src\\app.py", None),
    ],
)
def test_windows_paths_under_the_recorded_root_move_and_no_other(
    given: str, expected: str | None
) -> None:
    assert WINDOWS.path(given) == expected


def test_a_windows_cwd_outside_the_root_is_never_glued_onto_the_workspace() -> None:
    from pathlib import Path

    from toolrun.plan.recorded import _decided_cwd

    for own in ("C:\\Users\\dev\\other", "d:/build", "E:\\Work\\x", "\\\\server\\share\\x"):
        decided = _decided_cwd(own, WINDOWS, "/ws/checkout")
        assert decided.is_absolute(), own
        assert not str(decided).startswith("/ws/checkout"), own
    assert _decided_cwd("e:\\Workspace\\shop\\src", WINDOWS, "/ws") == Path("/ws/checkout/src")
