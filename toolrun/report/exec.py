"""What ``toolrun exec`` did: the run's report, the tally of its results, its exit code.

Plain data below the commands and renderers, beside the check report
(:mod:`toolrun.report.models`): ``commands.exec`` builds it, the CLI and the Python API
read it. No click and no printing here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolrun.errors import ExitCode, Problem
from toolrun.execution.results import Result, Status


class Tally:
    """What the recap and the exit code need of the results, counted as they come."""

    def __init__(self) -> None:
        self.counts: Counter[Status] = Counter()
        self.codes: set[ExitCode] = set()
        self.jailed = False  # a call ran in a jail
        self.unjailed: str | None = None  # why the first call meant for a jail ran without

    def add(self, result: Result) -> None:
        self.counts[result.status] += 1
        code = _code_of(result)
        if code is not None:
            self.codes.add(code)
        jail = result.metadata.get("jail") if result.metadata else None
        if isinstance(jail, dict):
            if jail.get("enforced"):
                self.jailed = True
            elif self.unjailed is None:
                self.unjailed = str(jail.get("reason") or "no jail could be made")


@dataclass(frozen=True, slots=True)
class ExecReport:
    """Everything ``exec`` has to report of a run: each plan's results and the timings."""

    run_id: str
    plans: tuple[str, ...]
    results: tuple[tuple[Result, ...], ...]
    wall_ms: float
    interrupted: bool
    journal_path: Path | None = None
    dry_run: bool = False
    all_results: tuple[Result, ...] = field(default=())
    # the output failed (stdout closed): the run was interrupted there
    output_error: str | None = None
    # a journal write failed mid-run: the journal is incomplete (exit 1 at least)
    journal_error: str | None = None

    unread_lines: int = 0  # `exec -`: lines read from stdin that never became calls
    #: the interrupt was SIGHUP (the terminal closed): exit 129 rather than 130
    hangup: bool = False
    #: every result counted, kept or not (ExecRequest.keep_results)
    tally: Tally = field(default_factory=Tally)
    #: the run's claim (#25): True when every call meant for a jail ran (a dry run: would
    #: run) in one, False when no jail could be made (``enforced_reason`` says why), None
    #: when no call was allowed on toolrun's judgement (nothing to claim)
    enforced: bool | None = None
    enforced_reason: str | None = None
    #: records of the sessions replayed that were skipped (located)
    warnings: tuple[Problem, ...] = ()
    #: the config files read, as shown (``sources:``), highest precedence first
    sources: tuple[str, ...] = ()
    #: the config's warnings (shown on stderr as the config loads; in the JSON report too)
    config_warnings: tuple[str, ...] = ()
    #: a hook stopped the run (``continue: false``): which, and why (exit 6)
    stopped: Mapping[str, Any] | None = None
    config_notes: tuple[Problem, ...] = ()  # the same, located (for CI annotations)

    @property
    def exit_code(self) -> ExitCode:
        codes = set(self.tally.codes)
        if not self.tally.counts:  # a report made without a tally: from its results
            codes.update(c for c in map(_code_of, self.all_results) if c is not None)
        if self.interrupted:
            codes.add(ExitCode.HANGUP if self.hangup else ExitCode.INTERRUPTED)
        if self.stopped is not None:  # even when no call was left to stop
            codes.add(ExitCode.HOOK_STOPPED)
        if self.journal_error is not None:
            codes.add(ExitCode.FAILED)
        return ExitCode.combine(codes)


def exit_code_for(results: Sequence[Result], *, interrupted: bool = False) -> ExitCode:
    codes = {code for code in map(_code_of, results) if code is not None}
    if interrupted:
        codes.add(ExitCode.INTERRUPTED)
    return ExitCode.combine(codes)


def _code_of(r: Result) -> ExitCode | None:
    """The exit code one result calls for (None: it is fine)."""
    if r.status is Status.INTERRUPTED:
        return ExitCode.HOOK_STOPPED if r.decided_by.kind == "stop" else ExitCode.INTERRUPTED
    if r.status is Status.DENIED:
        return ExitCode.DENIED if r.decision == "deny" else ExitCode.ASK
    if r.status is Status.NEEDS_APPROVAL or (r.status is Status.SKIPPED and r.decision == "ask"):
        return ExitCode.ASK
    if r.status is Status.ERROR and r.decided_by.kind == "invalid":
        return ExitCode.INVALID  # a line of `exec -` that is not a valid call
    if r.status in (Status.ERROR, Status.TIMEOUT, Status.CANCELLED):
        return ExitCode.FAILED
    return None

