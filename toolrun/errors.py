"""One exception hierarchy and one exit-code enum for all of toolrun.

The CLI maps :class:`ToolrunError` to its ``exit_code`` in a single place
(``toolrun.cli._app``); nothing else decides exit codes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from toolrun.dataclass_init import fast_init


class ExitCode(enum.IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    INVALID = 3
    DENIED = 4
    ASK = 5
    #: a hook stopped the run (``continue: false``, a PostToolBatch block): the calls
    #: after it did not run
    HOOK_STOPPED = 6
    #: interrupted by SIGHUP (the terminal closed): as 130, 128 + the signal's number
    HANGUP = 129
    INTERRUPTED = 130

    @staticmethod
    def combine(codes: Iterable[ExitCode]) -> ExitCode:
        """The code to exit with when several apply: 129, 130, 6, then 4, then 5, then 1."""
        seen = set(codes)
        for code in (
            ExitCode.HANGUP,
            ExitCode.INTERRUPTED,
            ExitCode.HOOK_STOPPED,
            ExitCode.DENIED,
            ExitCode.ASK,
            ExitCode.INVALID,
            ExitCode.FAILED,
        ):
            if code in seen:
                return code
        return ExitCode.OK


class Hangup(KeyboardInterrupt):
    """SIGHUP (the terminal closed) interrupted a command: it ends as Ctrl-C does, with
    :attr:`ExitCode.HANGUP`."""

    exit_code = ExitCode.HANGUP


# (one per call of a plan: fast_init writes the slots directly, half the frozen
# dataclass's own __init__)
@fast_init
@dataclass(frozen=True, slots=True)
class Location:
    """Where something came from: a file and a 1-based line and column."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Problem:
    """One located validation problem: ``FILE:LINE:COL: path: message``."""

    location: Location | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location is not None else ""
        what = f"{self.path}: " if self.path else ""
        return f"{where}{what}{self.message}"


def problem_json(p: Problem) -> dict[str, object]:
    """A problem as JSON reports give it: where (file, line, column), what, and its text."""
    return {
        "file": p.location.file if p.location else None,
        "line": p.location.line if p.location else None,
        "column": p.location.column if p.location else None,
        "path": p.path,
        "message": p.message,
        "text": str(p),
    }


class ToolrunError(Exception):
    """Base of every expected failure; carries the exit code it maps to."""

    exit_code: ExitCode = ExitCode.FAILED


class InvalidInputError(ToolrunError):
    """A plan or config is invalid: every problem is listed, nothing runs."""

    exit_code = ExitCode.INVALID

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class PlanError(InvalidInputError):
    """A plan file cannot be used."""


class ConfigError(InvalidInputError):
    """A config or settings file cannot be used."""


class JournalError(ToolrunError):
    """The run journal cannot be created: nothing runs (a run without its record would
    leave no trace of what it did)."""

    exit_code = ExitCode.INVALID


class UsageError(ToolrunError):
    """Bad command-line use that Click itself cannot see (e.g. an unknown tool name)."""

    exit_code = ExitCode.USAGE


class ToolError(ToolrunError):
    """A tool failed in an expected way; it becomes an ``error`` result, never a crash."""


class ToolTimeoutError(ToolError):
    """A tool ran out of time (its own input timeout)."""


class StoredOutputError(ToolrunError):
    """A call's stored output (``.toolrun/runs/<run-id>/<execution-id>.out``) is missing,
    altered or unreadable: ``show --full`` says which file and stops (exit 1)."""


class HookInputError(ToolrunError):
    """``toolrun hook`` got a payload it cannot decide (not JSON, no tool): exit 1, which
    Claude Code and Gemini CLI treat as a non-blocking hook error (never 2, a block)."""


class UntrustedJSONError(ToolrunError, ValueError):
    """JSON from outside toolrun (a hook's output, a verifier's report, a journal line)
    that is too long, too deep or not JSON (:mod:`toolrun.boundedjson`). A ``ValueError``,
    as a decode error is: callers treat every bad output the same way."""
