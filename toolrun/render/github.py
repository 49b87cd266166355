"""GitHub Actions workflow commands: one ``::error`` annotation per failing call.

Escaping follows GitHub's rules for workflow commands (actions/toolkit ``command.ts``):
in the message ``%``, ``\\r`` and ``\\n`` become ``%25``, ``%0D`` and ``%0A``; in property
values ``:`` and ``,`` also become ``%3A`` and ``%2C``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolrun.commands.check import CallCheck, CheckReport
    from toolrun.errors import Problem


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(
    name: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    col: int | None = None,
    title: str | None = None,
) -> str:
    """``::name file=F,line=L,col=C,title=T::message`` with only the properties given."""
    props = [
        f"{key}={escape_property(str(value))}"
        for key, value in (("file", file), ("line", line), ("col", col), ("title", title))
        if value is not None
    ]
    head = f"::{name} {','.join(props)}" if props else f"::{name}"
    return f"{head}::{escape_data(message)}"


def problem_annotation(problem: Problem) -> str:
    loc = problem.location
    message = f"{problem.path}: {problem.message}" if problem.path else problem.message
    return command(
        "error",
        message,
        file=loc.file if loc else None,
        line=loc.line if loc else None,
        col=loc.column if loc else None,
        title="toolrun check: invalid input",
    )


def call_annotation(file: str, call: CallCheck) -> str:
    outcome = "would be denied" if call.decision == "deny" else "would need approval"
    return command(
        "error",
        f"{call.tool}({call.target}): {call.why()}",
        file=file,
        line=call.line or None,
        col=call.column or None,
        title=f"toolrun: {call.tool} call {call.id} {outcome}",
    )


def annotation_lines(report: CheckReport) -> Iterator[str]:
    """Every invalid input's problems and every failing call, in input order."""
    for plan in report.plans:
        for problem in plan.problems:
            yield problem_annotation(problem)
        for call in plan.calls:
            if call.fails(report.fail_on):
                yield call_annotation(plan.file, call)
