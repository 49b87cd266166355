"""GitHub Actions: ``::error`` annotations for denied calls and invalid inputs,
``::warning`` for calls that would ask, and the job's Markdown step summary.

Escaping follows GitHub's rules for workflow commands (actions/toolkit ``command.ts``):
in the message ``%``, ``\\r`` and ``\\n`` become ``%25``, ``%0D`` and ``%0A``; in property
values ``:`` and ``,`` also become ``%3A`` and ``%2C``.

An annotation lands on a pull request only when its ``file`` is relative to the
repository's root (``GITHUB_WORKSPACE`` in a job), whatever folder toolrun ran in:
:class:`AnnotationPaths` makes it so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolrun.errors import Problem
    from toolrun.execution.results import Result
    from toolrun.report.models import CallCheck, CheckReport, PlanCheck


@dataclass(frozen=True, slots=True)
class AnnotationPaths:
    """Turns a path as an input named it (relative to ``cwd``) into one relative to
    ``root``; a path outside ``root`` stays as it was given."""

    cwd: Path
    root: Path

    @classmethod
    def from_env(cls, env: Mapping[str, str], cwd: Path) -> AnnotationPaths:
        """``GITHUB_WORKSPACE`` when set, else the repository around ``cwd`` (the nearest
        folder with a ``.git``), else ``cwd`` itself."""
        workspace = env.get("GITHUB_WORKSPACE")
        if workspace:
            return cls(cwd, Path(os.path.abspath(workspace)))
        for folder in (cwd, *cwd.parents):
            if (folder / ".git").exists():
                return cls(cwd, folder)
        return cls(cwd, cwd)

    def __call__(self, file: str) -> str:
        path = os.path.abspath(os.path.join(self.cwd, file))
        for root, target in ((str(self.root), path), _real(str(self.root), path)):
            relative = os.path.relpath(target, root)
            if relative != ".." and not relative.startswith(".." + os.sep):
                return relative
        return file


def _real(root: str, path: str) -> tuple[str, str]:
    # GITHUB_WORKSPACE or the checkout may be reached through a symlink.
    return os.path.realpath(root), os.path.realpath(path)


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


def problem_command(
    level: str, problem: Problem, paths: AnnotationPaths | None = None, title: str | None = None
) -> str:
    """A located problem (or config warning) as ``::error``/``::warning`` on its file and
    line; one without a place is an annotation of the job."""
    loc = problem.location
    text = problem.message.removeprefix("warning: ") if level == "warning" else problem.message
    message = f"{problem.path}: {text}" if problem.path else text
    file = loc.file if loc else None
    if title is None:
        title = "toolrun: config warning" if level == "warning" else "toolrun: invalid input"
    return command(
        level,
        message,
        file=paths(file) if paths and file else file,
        line=loc.line if loc else None,
        col=loc.column if loc else None,
        title=title,
    )


def problem_annotation(problem: Problem, paths: AnnotationPaths | None = None) -> str:
    return problem_command("error", problem, paths, "toolrun check: invalid input")


def config_annotations(notes: Iterable[Problem], paths: AnnotationPaths) -> Iterator[str]:
    """The config's warnings, each once, as ``::warning`` on the file and line."""
    for note in dict.fromkeys(notes):
        yield problem_command("warning", note, paths)


def call_annotation(file: str, call: CallCheck) -> str:
    """``::error`` for a call that would be denied, ``::warning`` for one that would ask."""
    denied = call.decision == "deny"
    outcome = "would be denied" if denied else "would need approval"
    return command(
        "error" if denied else "warning",
        f"{call.tool}({call.target}): {call.why()}",
        file=file,
        line=call.line or None,
        col=call.column or None,
        title=f"toolrun: {call.tool} call {call.id} {outcome}",
    )


def plan_annotations(plan: PlanCheck, paths: AnnotationPaths | None = None) -> Iterator[str]:
    """One input's problems, then every call that would be denied or would ask. Asks are
    annotated whatever ``--fail-on`` says: a reviewer should see them either way."""
    for problem in plan.problems:
        yield problem_annotation(problem, paths)
    file = paths(plan.file) if paths else plan.file
    for call in plan.calls:
        if call.decision in ("deny", "ask"):
            yield call_annotation(file, call)


def annotation_lines(report: CheckReport, paths: AnnotationPaths | None = None) -> Iterator[str]:
    """Every input's annotations, in input order."""
    for plan in report.plans:
        yield from plan_annotations(plan, paths)


#: a verifier's severity → the workflow command that shows it
_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}
#: exec results that failed, as annotations on the call's line of the plan
_FAILED = ("error", "denied", "timeout", "needs_approval", "cancelled", "interrupted")


def exec_annotations(
    results: Iterable[Result], workspace: Path, paths: AnnotationPaths
) -> Iterator[str]:
    """``toolrun exec --format github``: each call that did not succeed on its plan line,
    and every autoVerify diagnostic on its own file and line."""
    for result in results:
        if str(result.status) in _FAILED:
            loc = result.location
            yield command(
                "error",
                f"{result.tool}: {result.error or result.status}",
                file=paths(loc.file) if loc and loc.file else paths(result.plan),
                line=loc.line if loc else None,
                col=loc.column if loc else None,
                title=f"toolrun: {result.tool} call {result.id} {result.status}",
            )
        for report in result.verify:
            yield from _verify_annotations(result, report, workspace, paths)


def _verify_annotations(
    result: Result, report: Mapping[str, object], workspace: Path, paths: AnnotationPaths
) -> Iterator[str]:
    name = report.get("verifier")
    if report.get("status") in ("timeout", "failed"):
        yield command(
            "warning",
            f"verifier {name} {report.get('status')}: {report.get('message', '')}",
            file=paths(result.plan) if result.location is None else paths(result.location.file),
            line=result.location.line if result.location else None,
            title=f"toolrun autoVerify: {name} after {result.id}",
        )
    found = report.get("diagnostics")
    for d in found if isinstance(found, list) else ():
        code = f" {d.get('code')}" if d.get("code") else ""
        yield command(
            _LEVEL.get(str(d.get("severity")), "error"),
            str(d.get("message", "")),
            file=paths(str(workspace / str(d.get("file")))),
            line=d.get("line") or None,
            col=d.get("column") or None,
            title=f"{name}{code} (after {result.tool} {result.id})",
        )


def step_summary(report: CheckReport, recap: str, paths: AnnotationPaths) -> str:
    """The Markdown a job shows on its summary page: the recap, then a table of the calls
    that would be denied or ask and of the invalid inputs, each with where it is."""
    lines = ["### toolrun check", "", _md(recap), ""]
    rows = []
    for note in dict.fromkeys(report.config_notes):
        loc = note.location
        where = f"{paths(loc.file)}:{loc.line}" if loc and loc.file else ""
        text = note.message.removeprefix("warning: ")
        rows.append(("config warning", where, "", "", f"{note.path}: {text}" if note.path else text))
    for plan in report.plans:
        for problem in plan.problems:
            loc = problem.location
            where = f"{paths(loc.file)}:{loc.line}" if loc and loc.file else plan.file
            text = f"{problem.path}: {problem.message}" if problem.path else problem.message
            rows.append(("invalid", where, "", "", text))
        file = paths(plan.file)
        for call in plan.calls:
            if call.decision not in ("deny", "ask"):
                continue
            where = f"{file}:{call.line}" if call.line else file
            by = f"{call.rule} ({call.source})" if call.rule and call.source else call.rule
            rows.append(
                (call.decision, where, f"{call.id} {call.tool}({call.target})", by or call.kind,
                 call.reason)
            )
    if rows:
        lines += ["| | where | call | decided by | why |", "| --- | --- | --- | --- | --- |"]
        lines += ["| " + " | ".join(_md(cell) for cell in row) + " |" for row in rows]
        lines.append("")
    return "\n".join(lines) + "\n"


def exec_summary(
    results: Iterable[Result], recap: str, paths: AnnotationPaths, title: str = "toolrun exec"
) -> str:
    """``exec -o FILE.md``: the recap, then a table of each call that did not succeed."""
    lines = [f"### {title}", "", _md(recap), ""]
    rows = []
    for r in results:
        status = str(r.status)
        if status not in _FAILED:
            continue
        loc = r.location
        file = paths(loc.file) if loc and loc.file else paths(r.plan)
        where = f"{file}:{loc.line}" if loc and loc.line else file
        by = r.decided_by
        decider = f"{by.rule} ({by.source})" if by.rule and by.source else by.rule or by.kind
        rows.append((status, where, f"{r.id} {r.tool}", decider, r.error or status))
    if rows:
        lines += ["| | where | call | decided by | why |", "| --- | --- | --- | --- | --- |"]
        lines += ["| " + " | ".join(_md(cell) for cell in row) + " |" for row in rows]
        lines.append("")
    return "\n".join(lines) + "\n"


_MD_SPECIAL = str.maketrans(
    {c: "\\" + c for c in "\\`*_{}[]()#+-.!~|<>"} | {"\n": " ", "\r": " ", "&": "&amp;"}
)


def _md(text: str) -> str:
    """Text as a Markdown table cell: punctuation that formats is escaped, and a line
    break or ``|`` never ends the cell."""
    return " ".join(text.translate(_MD_SPECIAL).split())
