"""The check report in words: an input's header line and the recap that ends a check.

``2 inputs, 8 calls: 3 allow · 1 ask · 4 deny — 4 failing (--fail-on deny) in 0.1 s``:
what the text and table formats print last, and the GitHub step summary repeats.
"""

from __future__ import annotations

from toolrun.report.models import CheckReport, PlanCheck


def _runs_summary(plan: PlanCheck) -> str:
    concurrent = sum(1 for _, kind, _ in plan.runs if kind == "concurrent")
    exclusive = len(plan.runs) - concurrent
    return (
        f"{_n(plan.turns, 'turn')}, {_n(len(plan.calls), 'call')} in {_n(len(plan.runs), 'run')}"
        f" ({concurrent} concurrent, {exclusive} exclusive)"
    )


def plan_header(plan: PlanCheck) -> str:
    if plan.problems:
        return f"{plan.file}: invalid, not checked ({_n(len(plan.problems), 'problem')})"
    what = f"{plan.format}, {plan.name!r}" if plan.name else plan.format
    return f"{plan.file} ({what}): {_runs_summary(plan)}"


def recap(report: CheckReport) -> str:
    """``2 inputs, 8 calls: 3 allow · 1 ask · 4 deny — 4 failing (--fail-on deny) in 0.1 s``."""
    c = report.counts()
    parts = [f"{c[d]} {d}" for d in ("allow", "ask", "deny") if c[d]] or ["nothing decided"]
    if c["invalid"]:
        parts.append(f"{c['invalid']} invalid input{'s' if c['invalid'] != 1 else ''}")
    if c["warnings"]:
        parts.append(f"{_n(c['warnings'], 'record')} skipped")
    through = passed_text(report.not_failing(c))
    flag = f"(--fail-on {report.fail_on})"
    if c["failing"]:
        failing = f"{c['failing']} failing" + (f", {through}" if through else "") + f" {flag}"
    elif c["invalid"]:
        failing = (
            "invalid inputs fail the check"
            if c["invalid"] > 1
            else "an invalid input fails the check"
        ) + (f"; {through} {flag}" if through else "")
    else:
        failing = f"{through or 'nothing fails'} {flag}"
    return (
        f"{_n(c['plans'], 'input')}, {_n(c['calls'], 'call')}: {' · '.join(parts)}"
        f" — {failing} in {report.wall_ms / 1000:.1f} s"
    )


def passed_text(not_failing: dict[str, int]) -> str:
    """``2 denies and 3 asks not failing``: what --fail-on let through ("" for nothing)."""
    words = {"deny": ("deny", "denies"), "ask": ("ask", "asks")}
    parts = [
        f"{n} {words[d][n != 1]}" for d in ("deny", "ask") if (n := not_failing.get(d, 0))
    ]
    return " and ".join(parts) + " not failing" if parts else ""


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"

