"""What the executor keeps of one plan while it runs: where its results go, its working
directory, its share of the capacity, the hook results and rewritten inputs of calls that
wait for their result, the partition so far and the turn's writes still verifying."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from toolrun.execution.delivery import _Ordered, _Verifying
from toolrun.execution.results import Result
from toolrun.plan.models import Plan

if TYPE_CHECKING:
    from toolrun.hooks import PreToolUseResult

@dataclass
class _PlanState:
    """What the executor keeps while one plan runs: where results go, the working
    directory Bash is in, the plan's capacity limiter, hook results and rewritten inputs
    not yet in a result, the runs so far and the writes still being verified."""

    plan: Plan
    out: _Ordered
    cwd: Path
    limiter: anyio.CapacityLimiter | None
    results: list[Result] = field(default_factory=list)
    # PreToolUse hook results of calls that do not have their result yet
    pre: dict[int, PreToolUseResult] = field(default_factory=dict)
    # the partition so far: runs counted across the plan, the current run's place
    runs: int = 0
    run_place: dict[str, Any] = field(default_factory=dict)
    # inputs as the plan gave them, of calls whose input a hook rewrote
    originals: dict[int, Mapping[str, Any]] = field(default_factory=dict)
    # writes whose autoVerify runs on while later calls go (this turn's)
    verifying: _Verifying | None = None
