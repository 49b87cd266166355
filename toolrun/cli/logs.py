"""Warnings the core logs (``logging``, logger ``toolrun``) shown on stderr.

The core never prints: what a user should see that is not an error (a config rule that is
skipped, ...) is logged, and the CLI shows it, on whatever stderr is at the time. In CI
(``--format github``, or a GitHub job) a located warning is a ``::warning`` annotation on
its file and line instead, and the problems of an invalid config ``::error`` ones.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from toolrun.errors import Problem
    from toolrun.render.github import AnnotationPaths

# where annotations are made relative to, while a command wants them (None: plain text)
_annotating: list[AnnotationPaths | None] = [None]


def annotate(paths: AnnotationPaths | None) -> None:
    """From now on (until the command ends), warnings and errors with a place are GitHub
    annotations with paths made by ``paths``; None: plain lines again."""
    _annotating[0] = paths


def annotating() -> AnnotationPaths | None:
    return _annotating[0]


def annotation(level: str, problem: Problem) -> str:
    """``problem`` as a ``::warning``/``::error`` line (only while :func:`annotate` is on)."""
    from toolrun.render.github import problem_command

    paths = _annotating[0]
    assert paths is not None
    return problem_command(level, problem, paths)


class _EchoHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        problem: Problem | None = getattr(record, "problem", None)
        if problem is not None and _annotating[0] is not None:
            click.echo(annotation("warning", problem), err=True)
        else:
            click.echo(record.getMessage(), err=True)


@contextlib.contextmanager
def warnings_to_stderr() -> Iterator[None]:
    handler = _EchoHandler(logging.WARNING)
    logger = logging.getLogger("toolrun")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        _annotating[0] = None
