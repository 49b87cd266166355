"""The repository's scripts (``scripts/*.py``), imported by the tests that check their work."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).parents[1]


def load_script(name: str) -> ModuleType:
    """``scripts/NAME.py`` as a module (scripts are no package: they run on their own)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (dataclasses look their module up while it loads)
    spec.loader.exec_module(module)
    return module
