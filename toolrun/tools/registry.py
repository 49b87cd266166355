"""The tool registry: built-ins first, then anything added later (MCP, plugins)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from toolrun.tools.base import Tool

ENTRY_POINT_GROUP = "toolrun.tools"


@dataclass(frozen=True, slots=True)
class Registered:
    """A tool in the registry and where it came from (built in, a plugin, an MCP server)."""

    tool: Tool[Any]
    source: str


class ToolRegistry:
    """Name → tool. Names are unique; a later registration must say ``replace=True``.

    A tool may be registered by name with a factory (:meth:`register_lazy`): it is made
    the first time it is asked for, so that a run imports only the tools it uses.
    """

    def __init__(self) -> None:
        self._tools: dict[str, Registered] = {}
        self._lazy: dict[str, tuple[Callable[[], Tool[Any]], str]] = {}
        self._families: list[tuple[str, Callable[[str], Tool[Any]], str]] = []

    def register(self, tool: Tool[Any], *, source: str = "builtin", replace: bool = False) -> None:
        self._claim(tool.name, replace)
        self._tools[tool.name] = Registered(tool, source)

    def register_lazy(
        self, name: str, factory: Callable[[], Tool[Any]], *, source: str = "builtin"
    ) -> None:
        """Register the tool ``factory()`` will return, named ``name``, without making it."""
        self._claim(name, replace=False)
        self._lazy[name] = (factory, source)

    def register_family(
        self, prefix: str, factory: Callable[[str], Tool[Any]], *, source: str
    ) -> None:
        """Every name starting with ``prefix`` not otherwise registered is the tool
        ``factory(name)`` (made when asked for): the tools of an MCP server that could
        not be started, whose names are not known, each failing with why."""
        self._families.append((prefix, factory, source))

    def _claim(self, name: str, replace: bool) -> None:
        if name in self and not replace:
            raise ValueError(f"tool {name!r} is already registered by {self.source_of(name)}")
        self._lazy.pop(name, None)

    def get(self, name: str) -> Tool[Any] | None:
        entry = self._tools.get(name)
        if entry is None and name in self._lazy:
            entry = self._make(name)
        if entry is None and self._families:
            family = next((f for f in self._families if name.startswith(f[0])), None)
            if family is not None:
                entry = self._tools.setdefault(name, Registered(family[1](name), family[2]))
        return entry.tool if entry is not None else None

    def _make(self, name: str) -> Registered:
        lazy = self._lazy.get(name)
        if lazy is None:  # made meanwhile (by another thread)
            return self._tools[name]
        factory, source = lazy
        tool = factory()
        if tool.name != name:
            raise TypeError(f"the tool registered as {name!r} is named {tool.name!r}")
        entry = self._tools.setdefault(name, Registered(tool, source))
        self._lazy.pop(name, None)
        return entry

    def source_of(self, name: str) -> str:
        lazy = self._lazy.get(name)
        return lazy[1] if lazy is not None else self._tools[name].source

    def names(self) -> list[str]:
        return sorted([*self._tools, *self._lazy])

    def suggest(self, name: str) -> str | None:
        """The closest registered name, for "did you mean" hints."""
        import difflib  # only for a name that is not registered

        names = self.names()
        lowered = {n.lower(): n for n in names}
        if name.lower() in lowered:
            return lowered[name.lower()]
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        return close[0] if close else None

    def __contains__(self, name: object) -> bool:
        return name in self._tools or name in self._lazy

    def __iter__(self) -> Iterator[Registered]:
        for name in list(self._lazy):
            self._make(name)
        return iter(self._tools[n] for n in sorted(self._tools))

    def __len__(self) -> int:
        return len(self._tools) + len(self._lazy)


def _may_declare_plugins() -> bool:
    """Whether an installed distribution may declare a ``toolrun.tools`` entry point.

    ``importlib.metadata`` costs a one-call run about 15 ms to import (email, zipfile,
    csv), for a group that is usually empty. This looks where it would look, as it
    would (each ``sys.path`` folder's ``*.dist-info``/``*.egg-info`` folders), and says
    False only when every ``entry_points.txt`` there was read and none names the group;
    anything else (a zip or egg on the path, another distribution finder, an unreadable
    file) is True, and the full lookup decides.
    """
    import sys
    from importlib.machinery import PathFinder

    if any(
        hasattr(finder, "find_distributions") and finder is not PathFinder
        for finder in sys.meta_path
    ):
        return True
    for entry in sys.path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):
                return True  # a zip file
            continue
        if folder.lower().endswith(".egg"):
            return True
        try:
            with os.scandir(folder) as found:
                names = [e.name for e in found if e.name.lower().endswith(_INFO_SUFFIXES)]
            for name in names:
                path = os.path.join(folder, name, "entry_points.txt")
                try:
                    with open(path, encoding="utf-8", errors="replace") as file:
                        if ENTRY_POINT_GROUP in file.read():
                            return True
                except (FileNotFoundError, NotADirectoryError):
                    continue
        except OSError:
            return True
    return False


_INFO_SUFFIXES = (".dist-info", ".egg-info")


def _load_entry_points(registry: ToolRegistry) -> None:
    """Third-party tools from the ``toolrun.tools`` entry-point group.

    An entry point names a Tool instance, or a class/factory returning one.
    """
    if not _may_declare_plugins():
        return
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
    from toolrun.tools.builtins import BUILTIN_CLASSES, builtin_tool

    registry = ToolRegistry()
    for name in BUILTIN_CLASSES:
        registry.register_lazy(name, partial(builtin_tool, name))
    if plugins:
        _load_entry_points(registry)
    return registry
