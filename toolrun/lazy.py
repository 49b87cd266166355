"""Packages whose ``__init__`` names their API without importing every module of it.

``from toolrun.hooks.matching import compile_matcher`` first runs ``toolrun/hooks/__init__``;
when that imported the whole package, a config check paid for the hook runner, its
process supervisor and asyncio. A package lists its names here instead (and imports them
under ``TYPE_CHECKING`` for the type checker); each loads with its module on first use.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``names`` maps each exported name to the
    submodule that defines it (relative to the package)."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)  # the next lookup is a plain one
        return value

    return __getattr__
