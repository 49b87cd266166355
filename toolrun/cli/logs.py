"""Warnings the core logs (``logging``, logger ``toolrun``) shown on stderr.

The core never prints: what a user should see that is not an error (a config rule that is
skipped, ...) is logged, and the CLI shows it, on whatever stderr is at the time.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import click


class _EchoHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
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
