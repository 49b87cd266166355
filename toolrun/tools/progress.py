"""What a running call has printed so far, for a result its timeout cuts short.

A plan-level ``timeout:`` cancels the tool where it waits, so the tool never returns
its output; a tool that gathers output as it runs (Bash) says where to read it
(:func:`report_output`), and the runner (``toolrun.execution.invocation``) reads it
when the time is up. The holder is a context variable: one per running call, seen by
the tool's code in the same task without being passed through every signature.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar


class OutputSoFar:
    """Where one call's output so far can be read (nothing until its tool says)."""

    __slots__ = ("_read",)

    def __init__(self) -> None:
        self._read: Callable[[], str] | None = None

    def text(self) -> str:
        """The output so far ('' when the tool gave no way to read it)."""
        if self._read is None:
            return ""
        try:
            return self._read()
        except Exception:  # noqa: BLE001 - a result is still due: it has no output then
            return ""


current: ContextVar[OutputSoFar | None] = ContextVar("toolrun_output_so_far", default=None)


def report_output(read: Callable[[], str]) -> None:
    """Say how the running call's output so far is read (a no-op outside a call)."""
    holder = current.get()
    if holder is not None:
        holder._read = read
