"""toolrun: run, check and explain plans of AI-agent tool calls.

The package root stays import-light: it holds only the version, so that
``toolrun --help`` and shell completion never pay for pydantic, anyio or yaml.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
