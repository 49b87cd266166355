"""The built-in tools, with Claude Code's names and input fields (plus Codex's ApplyPatch)."""

from __future__ import annotations

from typing import Any

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

BUILTIN_TOOLS: tuple[Tool[Any], ...] = (
    BashTool(),
    ReadTool(),
    WriteTool(),
    EditTool(),
    MultiEditTool(),
    GlobTool(),
    GrepTool(),
    LSTool(),
    WebFetchTool(),
    ApplyPatchTool(),
)

__all__ = [
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
]
