"""Tools: the protocol every tool satisfies, the registry, and the built-ins."""

from __future__ import annotations

from toolrun.tools.base import BaseTool, Tool, ToolContext, ToolKind, ToolOutput
from toolrun.tools.registry import ToolRegistry, default_registry

__all__ = [
    "BaseTool",
    "Tool",
    "ToolContext",
    "ToolKind",
    "ToolOutput",
    "ToolRegistry",
    "default_registry",
]
