"""JUnit XML for ``toolrun check``: one <testsuite> per input, one <testcase> per call.

The shape is the common JUnit schema that CI systems read (Jenkins, GitLab, GitHub test
report actions): ``testsuites`` and ``testsuite`` carry ``name tests failures errors
skipped time``; ``testcase`` carries ``name classname time``; a failing call has one
``<failure message=... type=...>`` whose message names the rule and its source. An input
that could not be checked is a suite with one ``<error>`` test case listing its problems.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolrun.commands.check import CallCheck, CheckReport, PlanCheck

# characters XML 1.0 does not allow, even escaped
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with the characters XML cannot hold shown as ``\\xNN`` (ElementTree escapes
    the rest: ``& < > "``)."""
    return _INVALID_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


def _case(suite: ET.Element, plan: PlanCheck, call: CallCheck, fail_on: str) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        name=xml_text(f"{call.id} {call.tool}({call.target})"),
        classname=xml_text(plan.file),
        time="0.000",
    )
    if call.fails(fail_on):
        failure = ET.SubElement(case, "failure", message=xml_text(call.why()), type=call.decision)
        where = f"{plan.file}:{call.line}:{call.column}" if call.line else plan.file
        run = f", {call.run_kind} run {call.run}" if call.run else ""
        outcome = "be denied" if call.decision == "deny" else "need approval"
        by = call.kind + (f" {call.rule}" if call.rule else "")
        by += f" ({call.source})" if call.source else ""
        failure.text = xml_text(
            f"{where}: {call.id} {call.tool}({call.target}) would {outcome}"
            f" (turn {call.turn}{run})\n{call.why()}\ndecided by: {by}\n"
        )


def _suite(root: ET.Element, plan: PlanCheck, fail_on: str, timestamp: str) -> None:
    failures = sum(1 for c in plan.calls if c.fails(fail_on))
    errors = 1 if plan.problems else 0
    tests = len(plan.calls) + errors
    suite = ET.SubElement(
        root,
        "testsuite",
        name=xml_text(plan.file),
        tests=str(tests),
        failures=str(failures),
        errors=str(errors),
        skipped="0",
        time=_seconds(plan.wall_ms),
        timestamp=timestamp,
    )
    if plan.problems:
        n = len(plan.problems)
        case = ET.SubElement(
            suite, "testcase", name="load and validate", classname=xml_text(plan.file), time="0.000"
        )
        error = ET.SubElement(
            case,
            "error",
            message=xml_text(f"invalid input: {n} problem{'s' if n != 1 else ''}; nothing checked"),
            type="invalid",
        )
        error.text = xml_text("".join(f"{p}\n" for p in plan.problems))
    for call in plan.calls:
        _case(suite, plan, call, fail_on)


def junit_xml(report: CheckReport) -> str:
    """The whole report as a JUnit XML document (UTF-8, with its declaration)."""
    timestamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites", name="toolrun check")
    for plan in report.plans:
        _suite(root, plan, report.fail_on, timestamp)
    suites = list(root)
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.set("time", _seconds(report.wall_ms))
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
