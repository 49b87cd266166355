"""Terminal styling shared by commands: colours (click.style, only at a terminal and
never with NO_COLOR), the terminal's width, and --quiet / --verbose."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])

# green: it went well; red: it failed or was refused; yellow: it waits for a person or ran out
# of time; the rest (skipped, cancelled, interrupted) keep the terminal's colour.
COLOURS = {
    "ok": "green",
    "allow": "green",
    "error": "red",
    "denied": "red",
    "deny": "red",
    "ask": "yellow",
    "needs_approval": "yellow",
    "timeout": "yellow",
}


def colour_wanted(at_terminal: bool) -> bool:
    """Colours only at a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    return at_terminal and not os.environ.get("NO_COLOR")


def status_painter(at_terminal: bool) -> Callable[[str, str], str] | None:
    """``paint(text, status)`` colouring ``text`` for ``status``; None when colour is off."""
    if not colour_wanted(at_terminal):
        return None

    def paint(text: str, status: str) -> str:
        colour = COLOURS.get(status)
        return (
            click.style(text, fg=colour, bold=True if colour == "red" else None) if colour else text
        )

    return paint


def terminal_width() -> int:
    """The terminal's columns (COLUMNS wins, as for every program; 80 when unknown)."""
    import shutil  # only when a table is printed: `toolrun --help` imports this module

    return max(shutil.get_terminal_size((80, 24)).columns, 20)


def verbosity_options(f: F) -> F:
    f = click.option(
        "-v", "--verbose", is_flag=True, help="Also print who decided each call and every hook."
    )(f)
    f = click.option(
        "-q", "--quiet", is_flag=True, help="Print the recap only (not one line per call)."
    )(f)
    return f


class Progress:
    """One updating line on stderr (``3 done · last: call-3 ok``), only when enabled (stderr
    is a terminal); cleared before the report."""

    def __init__(self, *, enabled: bool, noun: str = "done") -> None:
        self.enabled = enabled
        self.noun = noun
        self.done = 0

    def tick(self, last: str) -> None:
        if not self.enabled:
            return
        self.done += 1
        click.echo(f"\r{self.done} {self.noun} · last: {last}\x1b[K", err=True, nl=False)

    def clear(self) -> None:
        if self.enabled and self.done:
            click.echo("\r\x1b[K", err=True, nl=False)
