"""Helpers for the per-program tests: is it read-only in the shared test tree, does it run code."""

from __future__ import annotations

from tests.permissions.conftest import Tree
from toolrun.permissions.bash import analyse
from toolrun.permissions.readonly import is_read_only_command


def read_only(tree: Tree, command: str) -> bool:
    return is_read_only_command(command, tree.ws, tree.ws)


def analysable(command: str) -> bool:
    return analyse(command).analysable
