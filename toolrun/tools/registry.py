"""The tool registry: built-ins first, then anything added later (MCP, plugins)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from toolrun.tools.base import Tool

ENTRY_POINT_GROUP = "toolrun.tools"


@dataclass(frozen=True, slots=True)
class Registered:
    tool: Tool[Any]
    source: str


class ToolRegistry:
    """Name → tool. Names are unique; a later registration must say ``replace=True``."""

    def __init__(self) -> None:
        self._tools: dict[str, Registered] = {}

    def register(self, tool: Tool[Any], *, source: str = "builtin", replace: bool = False) -> None:
        if tool.name in self._tools and not replace:
            raise ValueError(
                f"tool {tool.name!r} is already registered by {self._tools[tool.name].source}"
            )
        self._tools[tool.name] = Registered(tool, source)

    def get(self, name: str) -> Tool[Any] | None:
        entry = self._tools.get(name)
        return entry.tool if entry is not None else None

    def source_of(self, name: str) -> str:
        return self._tools[name].source

    def names(self) -> list[str]:
        return sorted(self._tools)

    def suggest(self, name: str) -> str | None:
        """The closest registered name, for "did you mean" hints."""
        lowered = {n.lower(): n for n in self._tools}
        if name.lower() in lowered:
            return lowered[name.lower()]
        close = difflib.get_close_matches(name, list(self._tools), n=1, cutoff=0.6)
        return close[0] if close else None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Registered]:
        return iter(self._tools[n] for n in sorted(self._tools))

    def __len__(self) -> int:
        return len(self._tools)


def _load_entry_points(registry: ToolRegistry) -> None:
    """Third-party tools from the ``toolrun.tools`` entry-point group.

    An entry point names a Tool instance, or a class/factory returning one.
    """
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        obj = ep.load()
        # A class satisfies the runtime Protocol check too, so classes are instantiated
        # first; then a factory function; then an instance is taken as it is.
        if isinstance(obj, type) or (callable(obj) and not isinstance(obj, Tool)):
            obj = obj()
        tool = obj
        if not isinstance(tool, Tool):
            raise TypeError(f"entry point {ep.name} ({ep.value}) is not a toolrun Tool")
        registry.register(tool, source=f"plugin:{ep.dist.name if ep.dist else ep.value}")


def default_registry(*, plugins: bool = True) -> ToolRegistry:
    """A new registry holding the built-in tools (and entry-point plugins)."""
    from toolrun.tools.builtins import BUILTIN_TOOLS

    registry = ToolRegistry()
    for tool in BUILTIN_TOOLS:
        registry.register(tool)
    if plugins:
        _load_entry_points(registry)
    return registry
