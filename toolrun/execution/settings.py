"""The settings of an exec (or check) run: concurrency and its per-kind limits, the turn
limit, sibling aborts, the dry run, the answer to an ask nobody answers, plans side by
side and the output kept beside the journal."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from toolrun.config.models import DEFAULT_MAX_STORED_OUTPUT


@dataclass(frozen=True, slots=True)
class ExecSettings:
    """How the executor runs plans: its limits, dry run or not, what an ask nobody answers
    gets, how many plans at once, and how much output is stored."""

    max_concurrency: int = 10
    kind_limits: Mapping[str, int] = field(default_factory=dict)
    max_calls_per_turn: int = 64
    sibling_abort_on_bash_error: bool = False
    dry_run: bool = False
    ask_default: Literal["deny", "allow"] = "deny"
    jobs: int = 1
    #: toolrun.maxStoredOutput: the most of one call's whole output kept beside the journal
    max_stored_output: int = DEFAULT_MAX_STORED_OUTPUT
