"""toolrun: run, check and explain plans of AI-agent tool calls.

The package root stays import-light: it holds only the version, so that
``toolrun --help``, shell completion and ``toolrun hook`` (on every tool call of an
agent) never pay for pydantic, anyio or yaml, nor even for ``typing``.
The Python API (:mod:`toolrun.api`: ``toolrun.decide``, ``toolrun.check``,
``toolrun.run``) loads on first use of one of its names.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (typing's own: an import every hook call would pay)
if TYPE_CHECKING:
    from toolrun.api import check, decide, run

__version__ = "0.1.0"

_API = ("check", "decide", "run")


def __getattr__(name: str) -> object:
    # each name loads with toolrun.api on first use (as toolrun.lazy does for packages)
    if name not in _API:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from toolrun.lazy import exports

    return exports(__name__, dict.fromkeys(_API, "api"))(name)


__all__ = ["__version__", "check", "decide", "run"]
