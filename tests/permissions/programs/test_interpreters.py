"""Interpreters and builtins given code inline: not analysable."""

from __future__ import annotations

import pytest

from tests.permissions.programs.helpers import analysable


@pytest.mark.parametrize("command", [
    "python3 -c 'import os; os.system(\"rm x\")'", "python -Sc 'x'", "perl -e 'system q(rm)'",
    "perl -E 'say 1'", "node -e 'x'", "node --eval=x", "ruby -e 'x'", "php -r 'x'",
    "watch rm x", "su -c 'rm x'", "trap 'rm x' EXIT", "/usr/bin/python3 -c x", "lua -e x",
    "python3 -W ignore -c x", "python3 -X dev -c x", "node -r m -e x", "ruby -I lib -e x",
])  # fmt: skip
def test_inline_code_is_not_analysable(command: str) -> None:
    assert not analysable(command)


@pytest.mark.parametrize("command", [
    "python3 script.py -c x", "python -m pytest", "node app.js", "trap - EXIT", "perl x.pl",
])  # fmt: skip
def test_scripts_from_files_stay_analysable(command: str) -> None:
    assert analysable(command)


@pytest.mark.parametrize("command", [
    "shopt -s expand_aliases; alias ls=rm\nls x", "alias ll='rm -rf'", "hash -p /bin/rm ls",
    "source /dev/stdin <<< 'rm x'", ". <(echo rm x)", "bash /dev/stdin <<< 'rm x'",
    "env -S 'rm x'", "enable -f ./evil.so x",
])  # fmt: skip
def test_builtins_that_rebind_names_or_source_fed_strings_are_not_analysable(
    command: str,
) -> None:
    assert not analysable(command)
