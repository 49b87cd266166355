"""The bridge from the permission engine to the executor: one decision path for exec and check."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from toolrun.execution.results import CallDecision, DecidedBy
from toolrun.plan.models import Call

if TYPE_CHECKING:
    from toolrun.permissions import PermissionEngine


class EngineDecider:
    def __init__(self, engine: PermissionEngine) -> None:
        self.engine = engine

    def decide(self, call: Call, cwd: Path) -> CallDecision:
        decision = self.engine.decide(call.tool, call.input, cwd=cwd)
        by = decision.decided_by
        return CallDecision(decision.decision, decision.reason, DecidedBy(by.kind, by.rule, by.source))
