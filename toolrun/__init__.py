"""toolrun: run, check and explain plans of AI-agent tool calls.

The package root stays import-light: it holds only the version, so that
``toolrun --help`` and shell completion never pay for pydantic, anyio or yaml.
The Python API (:mod:`toolrun.api`: ``toolrun.decide``, ``toolrun.check``,
``toolrun.run``) loads on first use of one of its names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.lazy import exports

if TYPE_CHECKING:
    from toolrun.api import check, decide, run

__version__ = "0.1.0"

# each name loads with toolrun.api on first use (see toolrun.lazy)
__getattr__ = exports(__name__, {"check": "api", "decide": "api", "run": "api"})

__all__ = ["__version__", "check", "decide", "run"]
