"""The built-in tools, with Claude Code's names and input fields (plus Codex's ApplyPatch).

Each tool's module is imported (and its input model built) the first time a registry is
asked for that tool: a one-call run pays for the tool it runs, not for ten. The table
below names every tool without importing it; ``BUILTIN_TOOLS`` and the classes are still
importable from here, and load them all.
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolrun.tools.base import Tool
    from toolrun.tools.builtins.apply_patch import ApplyPatchTool
    from toolrun.tools.builtins.bash import BashTool
    from toolrun.tools.builtins.edit import EditTool
    from toolrun.tools.builtins.glob import GlobTool
    from toolrun.tools.builtins.grep import GrepTool
    from toolrun.tools.builtins.ls import LSTool
    from toolrun.tools.builtins.multiedit import MultiEditTool
    from toolrun.tools.builtins.read import ReadTool
    from toolrun.tools.builtins.webfetch import WebFetchTool
    from toolrun.tools.builtins.write import WriteTool

    BUILTIN_TOOLS: tuple[Tool[Any], ...]

#: tool name -> "module:class", in the order the tools were always registered
BUILTIN_CLASSES: dict[str, str] = {
    "Bash": "toolrun.tools.builtins.bash:BashTool",
    "Read": "toolrun.tools.builtins.read:ReadTool",
    "Write": "toolrun.tools.builtins.write:WriteTool",
    "Edit": "toolrun.tools.builtins.edit:EditTool",
    "MultiEdit": "toolrun.tools.builtins.multiedit:MultiEditTool",
    "Glob": "toolrun.tools.builtins.glob:GlobTool",
    "Grep": "toolrun.tools.builtins.grep:GrepTool",
    "LS": "toolrun.tools.builtins.ls:LSTool",
    "WebFetch": "toolrun.tools.builtins.webfetch:WebFetchTool",
    "ApplyPatch": "toolrun.tools.builtins.apply_patch:ApplyPatchTool",
}

_CLASS_NAMES = {target.split(":")[1]: target for target in BUILTIN_CLASSES.values()}
# one instance per tool for the whole process, as when they were made at import
_instances: dict[str, Tool[Any]] = {}
_lock = threading.Lock()


def _load(target: str) -> Any:
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


def builtin_tool(name: str) -> Tool[Any]:
    """The process's one instance of the built-in tool ``name`` (KeyError: no such tool)."""
    tool = _instances.get(name)
    if tool is None:
        cls = _load(BUILTIN_CLASSES[name])
        with _lock:
            tool = _instances.setdefault(name, cls())
    return tool


def __getattr__(name: str) -> Any:
    if name == "BUILTIN_TOOLS":
        return tuple(builtin_tool(n) for n in BUILTIN_CLASSES)
    if name in _CLASS_NAMES:
        return _load(_CLASS_NAMES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BUILTIN_CLASSES",
    "BUILTIN_TOOLS",
    "ApplyPatchTool",
    "BashTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "LSTool",
    "MultiEditTool",
    "ReadTool",
    "WebFetchTool",
    "WriteTool",
    "builtin_tool",
]
