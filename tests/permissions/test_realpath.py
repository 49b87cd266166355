"""``paths.realpath`` (which reads only below a known root and stops at the first missing
part) says what ``os.path.realpath`` says, for every path in a tree of files, directories,
symlinks (to files, directories, missing targets, loops) and missing names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolrun.permissions.paths import frozen_tree, normalise, realpath, variants

NAMES = ["a", "d", "f", "ln", "lnd", "lnx", "loop", "up", "missing", "abs"]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("realpath").resolve() / "ws"
    (root / "d" / "d").mkdir(parents=True)
    (root / "a").mkdir()
    (root / "f").write_text("x\n")
    (root / "d" / "f").write_text("x\n")
    (root / "ln").symlink_to("f")
    (root / "lnd").symlink_to("d")
    (root / "d" / "lnd").symlink_to("..")
    (root / "lnx").symlink_to("nowhere/x")
    (root / "loop").symlink_to("loop")
    (root / "up").symlink_to("../..")
    (root / "abs").symlink_to(root / "d" / "d")
    os.chmod(root / "a", 0o000)  # (root reads it all the same; others get EACCES)
    variants(str(root))  # a known root, as the workspace is
    return root


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(NAMES), min_size=1, max_size=5))
def test_realpath_agrees_with_os_realpath(root: Path, parts: list[str]) -> None:
    link = normalise(str(root) + "/" + "/".join(parts))
    assert realpath(link) == normalise(os.path.realpath(link))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=5), max_size=6))
def test_a_frozen_tree_says_what_os_realpath_says_too(root: Path, paths: list[list[str]]) -> None:
    # the same tree looked up many times (missing names remembered): the same answers
    with frozen_tree():
        for parts in paths:
            link = normalise(str(root) + "/" + "/".join(parts))
            assert realpath(link) == normalise(os.path.realpath(link))


def test_a_frozen_tree_remembers_a_missing_name_until_it_thaws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolrun.permissions import paths

    ws = tmp_path.resolve() / "ws"
    (ws / "elsewhere").mkdir(parents=True)
    monkeypatch.setattr(paths, "_KNOWN", {})  # (other tests may have filled it)
    variants(str(ws))  # the workspace: a known root
    with frozen_tree():  # (a check: nothing runs that could make the name)
        assert realpath(f"{ws}/later/x") == f"{ws}/later/x"
        (ws / "later").symlink_to(ws / "elsewhere")
        assert realpath(f"{ws}/later/x") == f"{ws}/later/x"
    # exec runs things: every lookup reads the tree as it is now
    assert realpath(f"{ws}/later/x") == f"{ws}/elsewhere/x"
    with frozen_tree():
        assert realpath(f"{ws}/later/x") == f"{ws}/elsewhere/x"


def test_a_frozen_tree_remembers_a_name_that_is_there_until_it_thaws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolrun.permissions import paths

    ws = tmp_path.resolve() / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "elsewhere").mkdir()
    monkeypatch.setattr(paths, "_KNOWN", {})  # (other tests may have filled it)
    variants(str(ws))  # the workspace: a known root
    with frozen_tree():  # (a check: nothing runs that could change the directory)
        assert realpath(f"{ws}/src/a.py") == f"{ws}/src/a.py"
        (ws / "src").rmdir()
        (ws / "src").symlink_to(ws / "elsewhere")
        assert realpath(f"{ws}/src/b.py") == f"{ws}/src/b.py"  # src read once, as it was
    # exec runs things: every lookup reads the tree as it is now
    assert realpath(f"{ws}/src/b.py") == f"{ws}/elsewhere/b.py"
    with frozen_tree():
        assert realpath(f"{ws}/src/b.py") == f"{ws}/elsewhere/b.py"
