"""Claude Code-compatible permission rules: grammar, Bash analysis, paths, modes, decisions.

``PermissionEngine(config, registry).decide(tool, input)`` is the one decision
path; everything else here is pure helpers it is built from. Importing this
package does not load tree-sitter (it loads on the first Bash command).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.lazy import exports

if TYPE_CHECKING:
    from toolrun.permissions.decision import (
        BoundaryCheck,
        DecidedBy,
        Decision,
        RuleTrace,
        SubcommandVerdict,
        TargetVerdict,
    )
    from toolrun.permissions.grammar import ParsedRule, RuleSyntaxError, parse_rule
    from toolrun.permissions.readonly import is_read_only_command
    from toolrun.permissions.resolver import PermissionEngine
    from toolrun.permissions.tool_subjects import BUILTIN_TOOLS

# each name loads with its module on first use (see toolrun.lazy)
__getattr__ = exports(
    __name__,
    {
        "BoundaryCheck": "decision",
        "DecidedBy": "decision",
        "Decision": "decision",
        "RuleTrace": "decision",
        "SubcommandVerdict": "decision",
        "TargetVerdict": "decision",
        "ParsedRule": "grammar",
        "RuleSyntaxError": "grammar",
        "parse_rule": "grammar",
        "is_read_only_command": "readonly",
        "BUILTIN_TOOLS": "tool_subjects",
        "PermissionEngine": "resolver",
    },
)

__all__ = [
    "BUILTIN_TOOLS",
    "BoundaryCheck",
    "DecidedBy",
    "Decision",
    "ParsedRule",
    "PermissionEngine",
    "RuleSyntaxError",
    "RuleTrace",
    "SubcommandVerdict",
    "TargetVerdict",
    "is_read_only_command",
    "parse_rule",
]
