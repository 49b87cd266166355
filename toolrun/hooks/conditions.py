"""The hook handler ``if`` field: one permission rule used as a pre-filter.

A hook with ``if: "Bash(git *)"`` runs only for calls that rule matches, with
the permission engine's own matching (so Bash is sub-command aware:
``cd x && git push`` matches, and so do ``$(...)``, wrappers and ``VAR=``
prefixes). The rule is asked as a lone *deny* rule: it matches when the engine
denies the call because of that rule. When the engine cannot analyse a Bash
command, the hook runs anyway (Claude Code fails open here: ``if`` filters,
it does not enforce).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.config.models import Config, PermissionRule, SettingSource, SourceKind
from toolrun.errors import ConfigError
from toolrun.hooks.matching import IfVerdict

if TYPE_CHECKING:
    from toolrun.permissions import PermissionEngine
    from toolrun.tools.registry import ToolRegistry


class IfFilter:
    """Answers "does this ``if`` rule match this call?"; one engine per rule, built once."""

    def __init__(self, config: Config, registry: ToolRegistry | None = None) -> None:
        self._config = config
        self._registry = registry
        self._engines: dict[str, PermissionEngine | str] = {}

    def _engine(self, rule: str) -> PermissionEngine | str:
        engine = self._engines.get(rule)
        if engine is None:
            from toolrun.permissions import PermissionEngine

            source = SettingSource(SourceKind.CLI, None, 0, self._config.workspace, flag="if")
            config = Config(
                workspace=self._config.workspace,
                additional_directories=self._config.additional_directories,
                rules=(PermissionRule("deny", rule, source),),
            )
            try:
                engine = PermissionEngine(config, self._registry)
            except ConfigError as exc:
                engine = exc.problems[0].message if exc.problems else str(exc)
            except ValueError as exc:
                engine = str(exc) or type(exc).__name__
            self._engines[rule] = engine
        return engine

    def __call__(
        self, rule: str, tool: str, tool_input: Mapping[str, Any], cwd: Path | None
    ) -> IfVerdict:
        engine = self._engine(rule)
        if isinstance(engine, str):
            return IfVerdict(True, f"if {rule!r} cannot be used ({engine}); the hook runs")
        try:
            decision = engine.decide(tool, tool_input, cwd=cwd)
        except (ValueError, TypeError, KeyError, AttributeError, OSError) as exc:
            return IfVerdict(True, f"if {rule!r} cannot be checked ({exc}); the hook runs")
        if decision.decision == "deny" and decision.decided_by.kind == "rule":
            return IfVerdict(True, f"if {rule!r} matches")
        if decision.problems:
            why = "; ".join(decision.problems)
            return IfVerdict(True, f"if {rule!r}: the command cannot be analysed ({why}); "
                                   "the hook runs")
        return IfVerdict(False, f"if {rule!r} does not match")
