"""Tilde prefixes expand as bash expands them, checked against bash itself."""

from __future__ import annotations

import os
import pwd
import subprocess

import pytest

from toolrun.permissions.tilde import TildeError, expand_tilde, tilde_prefix


def bash_expands(word: str, *, home: str, cwd: str, oldpwd: str) -> str:
    env = {"HOME": home, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OLDPWD": oldpwd}
    out = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", f"printf %s {word}"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


ROOT_HOME = pwd.getpwuid(0).pw_dir


@pytest.mark.parametrize(
    "word",
    ["~", "~/a/b", "~root", "~root/x", "~+", "~+/../x", "~-", "~-/y", "~nosuchuser1/x", "a~b"],
)
def test_expansion_agrees_with_bash(word: str, tmp_path: os.PathLike[str]) -> None:
    # bash keeps an inherited OLDPWD only when it names an existing directory
    home, cwd, oldpwd = "/home/someone", str(tmp_path), os.path.dirname(tmp_path)
    expected = bash_expands(word, home=home, cwd=cwd, oldpwd=oldpwd)
    assert expand_tilde(word, home=home, cwd=cwd, oldpwd=oldpwd) == expected


def test_root_home_is_the_password_database_entry() -> None:
    assert expand_tilde("~root/x", home="/h") == ROOT_HOME.rstrip("/") + "/x"


@pytest.mark.parametrize("word", ["~+/x", "~-/x", "~1", "~+2/x", "~-0"])
def test_forms_that_need_unknown_state_are_refused(word: str) -> None:
    with pytest.raises(TildeError):
        expand_tilde(word, home="/h")


def test_prefix_split() -> None:
    assert tilde_prefix("~root/a/b") == ("root", "/a/b")
    assert tilde_prefix("~") == ("", "")
    assert tilde_prefix("x/~") is None
