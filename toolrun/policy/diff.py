"""Policy diff: what changes if a new config ships (``check --compare-config NEW``).

Every call is decided under both configs; only the calls whose decision changes are
reported, as *loosened* (deny→ask, deny→allow, ask→allow) or *tightened* (the reverse),
each with the decider on both sides. ``--fail-on loosen`` fails the check (exit 4) when
any decision loosens. Pure functions over two check reports; renderers return text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from toolrun.errors import ExitCode, Problem

if TYPE_CHECKING:
    from toolrun.report.models import CallCheck, CheckReport

_RANK = {"deny": 0, "ask": 1, "allow": 2}
Direction = Literal["loosened", "tightened"]


@dataclass(frozen=True, slots=True)
class Change:
    """One call whose decision differs between the base and the new config."""

    file: str
    before: CallCheck
    after: CallCheck

    @property
    def direction(self) -> Direction:
        return (
            "loosened" if _RANK[self.after.decision] > _RANK[self.before.decision] else "tightened"
        )

    def where(self) -> str:
        call = self.after
        return f"{self.file}:{call.line}:{call.column}" if call.line else self.file

    def label(self) -> str:
        return f"{self.after.id} {self.after.tool}({self.after.target})"

    def text(self) -> str:
        """``deny → allow`` with who decided on each side."""
        return (
            f"{self.before.decision} → {self.after.decision}; before: {_decider(self.before)}; "
            f"after: {_decider(self.after)}"
        )

    def to_json(self) -> dict[str, Any]:
        call = self.after
        return {
            "file": self.file,
            "line": call.line or None,
            "column": call.column or None,
            "id": call.id,
            "tool": call.tool,
            "input": dict(call.input),
            "direction": self.direction,
            "before": _side_json(self.before),
            "after": _side_json(self.after),
        }


def _decider(call: CallCheck) -> str:
    if call.rule:
        return f"rule {call.rule}" + (f" ({call.source})" if call.source else "")
    return call.reason or call.kind


def _side_json(call: CallCheck) -> dict[str, Any]:
    return {
        "decision": call.decision,
        "kind": call.kind,
        "rule": call.rule,
        "source": call.source,
        "reason": call.reason,
    }


@dataclass(frozen=True, slots=True)
class PolicyDiff:
    base: str  # what the base config is (its files)
    new: str
    calls: int
    changes: tuple[Change, ...]
    problems: tuple[Problem, ...]
    fail_on: str
    wall_ms: float

    def of(self, direction: Direction) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.direction == direction)

    def not_failing(self) -> int:
        """The loosened decisions ``--fail-on never`` lets through."""
        return 0 if self.fail_on == "loosen" else len(self.of("loosened"))

    def fails(self, change: Change) -> bool:
        return self.fail_on == "loosen" and change.direction == "loosened"

    @property
    def exit_code(self) -> ExitCode:
        if self.problems:
            return ExitCode.INVALID
        if any(self.fails(c) for c in self.changes):
            return ExitCode.DENIED
        return ExitCode.OK

    def summary(self) -> str:
        loose, tight = len(self.of("loosened")), len(self.of("tightened"))
        passed = self.not_failing()
        if self.exit_code is ExitCode.DENIED:
            verdict = "loosened decisions fail the check (--fail-on loosen)"
        elif passed:  # never "nothing fails" of a loosening it let through (#26)
            noun = "decision" if passed == 1 else "decisions"
            verdict = f"{passed} loosened {noun} not failing (--fail-on {self.fail_on})"
        else:
            verdict = f"nothing fails (--fail-on {self.fail_on})"
        invalid = f", {len(self.problems)} input problems" if self.problems else ""
        return (
            f"policy diff {self.base} → {self.new}: {self.calls} calls, "
            f"{loose} loosened, {tight} tightened{invalid} — {verdict}"
        )


def diff_reports(
    base: CheckReport, new: CheckReport, *, base_label: str, new_label: str, fail_on: str
) -> PolicyDiff:
    """The calls whose decision differs (same inputs, same calls: matched by position)."""
    after = {(plan.file, call.position): call for plan, call in new.calls}
    changes: list[Change] = []
    calls = 0
    for plan, call in base.calls:
        calls += 1
        other = after.get((plan.file, call.position))
        if other is not None and other.decision != call.decision:
            changes.append(Change(plan.file, call, other))
    problems = tuple(base.problems)
    if len(problems) != sum(1 for _ in new.problems):  # an input one side could not read
        problems += tuple(p for p in new.problems if p not in problems)
    return PolicyDiff(
        base=base_label,
        new=new_label,
        calls=calls,
        changes=tuple(changes),
        problems=problems,
        fail_on=fail_on,
        wall_ms=base.wall_ms + new.wall_ms,
    )


# -- renderers ------------------------------------------------------------------------------


def text_lines(diff: PolicyDiff) -> Iterator[str]:
    directions: tuple[Direction, ...] = ("loosened", "tightened")
    for direction in directions:
        changes = diff.of(direction)
        if not changes:
            continue
        yield f"{direction} ({len(changes)}):"
        for change in changes:
            yield f"  {change.where()}: {change.label()}: {change.text()}"
    yield diff.summary()


def json_text(diff: PolicyDiff) -> str:
    return (
        json.dumps(
            {
                "base": diff.base,
                "new": diff.new,
                "summary": {
                    "calls": diff.calls,
                    "changed": len(diff.changes),
                    "loosened": len(diff.of("loosened")),
                    "tightened": len(diff.of("tightened")),
                    "fail_on": diff.fail_on,
                    "not_failing": {"loosened": diff.not_failing()},
                    "exit_code": int(diff.exit_code),
                    "wall_ms": round(diff.wall_ms, 1),
                },
                "problems": [str(p) for p in diff.problems],
                "loosened": [c.to_json() for c in diff.of("loosened")],
                "tightened": [c.to_json() for c in diff.of("tightened")],
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


def jsonl_lines(diff: PolicyDiff) -> Iterator[str]:
    for change in diff.changes:
        yield json.dumps(change.to_json(), ensure_ascii=False)


def github_lines(diff: PolicyDiff) -> Iterator[str]:
    from toolrun.render.github import command, problem_annotation

    for problem in diff.problems:
        yield problem_annotation(problem)
    for change in diff.changes:
        yield command(
            "error" if diff.fails(change) else "notice",
            f"{change.label()}: {change.text()}",
            file=change.file,
            line=change.after.line or None,
            col=change.after.column or None,
            title=f"toolrun policy diff: {change.direction}",
        )
    yield diff.summary()


def junit_xml(diff: PolicyDiff) -> str:
    """One suite, one test case per changed call; a loosened one fails with --fail-on loosen."""
    import xml.etree.ElementTree as ET

    from toolrun.render.junit import xml_text

    failures = sum(1 for c in diff.changes if diff.fails(c))
    root = ET.Element("testsuites", name="toolrun policy diff")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=xml_text(f"{diff.base} → {diff.new}"),
        tests=str(len(diff.changes) + len(diff.problems)),
        failures=str(failures),
        errors=str(len(diff.problems)),
        skipped="0",
        time=f"{diff.wall_ms / 1000:.3f}",
    )
    for problem in diff.problems:
        case = ET.SubElement(suite, "testcase", name="invalid input", classname="toolrun")
        ET.SubElement(case, "error", message=xml_text(str(problem)), type="invalid")
    for change in diff.changes:
        case = ET.SubElement(
            suite,
            "testcase",
            name=xml_text(f"{change.direction}: {change.label()}"),
            classname=xml_text(change.file),
            time="0.000",
        )
        if diff.fails(change):
            ET.SubElement(case, "failure", message=xml_text(change.text()), type="loosened")
        else:
            ET.SubElement(case, "system-out").text = xml_text(change.text())
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
