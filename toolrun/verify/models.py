"""What a verifier found: diagnostics, and one report per verifier run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "note"]
#: ok: it ran and nothing is left after filtering; found: diagnostics are left;
#: timeout / failed: it did not give a usable report (``message`` says why)
VerifyStatus = Literal["ok", "found", "timeout", "failed"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding. ``file`` is as the verifier named it until filtered, then relative to
    the workspace; ``line`` and ``column`` are 1-based, 0 when not given."""

    file: str
    line: int
    column: int
    severity: Severity
    code: str
    message: str

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class VerifyReport:
    verifier: str
    status: VerifyStatus
    diagnostics: tuple[Diagnostic, ...] = ()
    message: str = ""
    duration_ms: float = 0.0
    block: bool = False
    files: tuple[str, ...] = field(default=())

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    def as_json(self) -> dict[str, Any]:
        return {
            "verifier": self.verifier,
            "status": self.status,
            "diagnostics": [d.as_json() for d in self.diagnostics],
            **({"message": self.message} if self.message else {}),
            "files": list(self.files),
            "block": self.block,
            "duration_ms": round(self.duration_ms, 3),
        }


def severity_of(raw: object) -> Severity:
    """A tool's severity word (or eslint's 1/2) as error, warning or note."""
    text = str(raw).strip().lower()
    if text in ("2", "error", "fatal", "failure"):
        return "error"
    if text in ("1", "warning", "warn"):
        return "warning"
    if text in ("note", "info", "information", "hint", "none"):
        return "note"
    return "error"  # unknown words count as errors: block must not miss one
