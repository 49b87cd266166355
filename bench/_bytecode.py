"""Time toolrun as an installed copy runs: from bytecode.

An editable install leaves no ``.pyc`` beside the source until Python writes one, and a
machine with ``PYTHONDONTWRITEBYTECODE=1`` never does: every run would then compile
about a hundred modules again (about 0.09 s, a third of a one-call ``exec``), which a
``pip install`` does once. The benches compile the package first, as an install would.
"""

from __future__ import annotations

import compileall
import importlib.util
from pathlib import Path


def compile_package(*sources: str | Path | None) -> None:
    """Write the bytecode of the ``toolrun`` this interpreter imports (and of the one in
    each other source tree given, e.g. an ``--against`` checkout)."""
    spec = importlib.util.find_spec("toolrun")
    packages = list(spec.submodule_search_locations or ()) if spec is not None else []
    packages += [str(Path(s) / "toolrun") for s in sources if s is not None]
    for package in packages:
        compileall.compile_dir(package, quiet=1)
