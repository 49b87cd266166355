"""Pseudo-terminals for tests that run toolrun as a person at a terminal would."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import termios


def open_terminal(columns: int, rows: int = 40) -> tuple[int, int]:
    """A pseudo-terminal of the given size: (our side, the program's side)."""
    ours, theirs = pty.openpty()
    fcntl.ioctl(theirs, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    return ours, theirs


def read_to_end(fd: int) -> bytes:
    """Everything the program writes until it closes its side of the terminal."""
    seen = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO once the program's side is closed
            break
        if not chunk:
            break
        seen += chunk
    return seen


def environment_without_size() -> dict[str, str]:
    """os.environ without COLUMNS and LINES (pytest may set them), so the terminal's own
    size is what toolrun sees."""
    return {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
