"""Small path helpers shared by loaders and reports."""

from __future__ import annotations

import os
from pathlib import Path


def display_path(path: Path | str) -> str:
    """A path as users like to read it: relative to the current directory when inside it."""
    p = Path(path)
    try:
        cwd = Path.cwd()
    except OSError:  # the current directory was removed
        return str(p)
    absolute = p if p.is_absolute() else cwd / p
    try:
        return str(Path(os.path.normpath(absolute)).relative_to(cwd))
    except ValueError:
        return str(os.path.normpath(absolute))
