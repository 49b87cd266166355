"""JUnit XML for ``toolrun check``: one <testsuite> per input, one <testcase> per call.

The shape is the common JUnit schema that CI systems read (Jenkins, GitLab, GitHub test
report actions): ``testsuites`` and ``testsuite`` carry ``name tests failures errors
skipped time``; ``testcase`` carries ``name classname time`` and the call's ``file`` and
``line`` (the attributes test report actions turn into annotations); a failing call has one
``<failure message=... type=...>`` whose message names the rule and its source; a call that
would ask and does not fail the check (``--fail-on deny``) is ``<skipped message=reason>``,
so that CI test views show it apart from the calls that pass. An input that could not be
checked is a suite with one ``<error>`` test case listing its problems.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from toolrun.execution.results import Result
    from toolrun.report.models import CallCheck, CheckReport, PlanCheck

# characters XML 1.0 does not allow, even escaped
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with the characters XML cannot hold shown as ``\\xNN`` (ElementTree escapes
    the rest: ``& < > "``)."""
    return _INVALID_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


def _case(plan: PlanCheck, call: CallCheck, fail_on: str) -> ET.Element:
    case = ET.Element(
        "testcase",
        name=xml_text(f"{call.id} {call.tool}({call.target})"),
        classname=xml_text(plan.file),
        time="0.000",
        file=xml_text(call.file or plan.file),
    )
    if call.line:
        case.set("line", str(call.line))
    if _skipped(call, fail_on):
        ET.SubElement(case, "skipped", message=xml_text(call.why()))
    elif call.fails(fail_on):
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
    return case


def _skipped(call: CallCheck, fail_on: str) -> bool:
    """An ask the check lets through: neither a pass nor a failure."""
    return call.decision == "ask" and not call.fails(fail_on)


def _problems_case(plan: PlanCheck) -> ET.Element:
    n = len(plan.problems)
    case = ET.Element(
        "testcase",
        name="load and validate",
        classname=xml_text(plan.file),
        time="0.000",
        file=xml_text(plan.file),
    )
    first = next((p.location for p in plan.problems if p.location is not None), None)
    if first is not None:
        case.set("line", str(first.line))
    error = ET.SubElement(
        case,
        "error",
        message=xml_text(f"invalid input: {n} problem{'s' if n != 1 else ''}; nothing checked"),
        type="invalid",
    )
    error.text = xml_text("".join(f"{p}\n" for p in plan.problems))
    return case


def _suite_counts(plan: PlanCheck, fail_on: str) -> tuple[int, int, int, int]:
    """(tests, failures, errors, skipped) of one input's suite."""
    failures = sum(1 for c in plan.calls if c.fails(fail_on))
    skipped = sum(1 for c in plan.calls if _skipped(c, fail_on))
    errors = 1 if plan.problems else 0
    return len(plan.calls) + errors, failures, errors, skipped


def _tags(element: ET.Element) -> tuple[str, str]:
    """The start and end tags of ``element`` as ElementTree writes them (same escaping)."""
    element.text = "\0"  # no XML text holds a NUL: a safe place to cut
    start, end = ET.tostring(element, encoding="unicode").split("\0")
    element.text = None
    return start, end


def _xml(element: ET.Element, level: int) -> str:
    ET.indent(element, space="  ", level=level)
    return ET.tostring(element, encoding="unicode")


def _suite(plan: PlanCheck, fail_on: str, timestamp: str) -> Iterator[str]:
    tests, failures, errors, skipped = _suite_counts(plan, fail_on)
    suite = ET.Element(
        "testsuite",
        name=xml_text(plan.file),
        tests=str(tests),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=_seconds(plan.wall_ms),
        timestamp=timestamp,
    )
    if not tests:
        yield "\n  " + ET.tostring(suite, encoding="unicode")
        return
    start, end = _tags(suite)
    yield "\n  " + start
    if plan.problems:
        yield "\n    " + _xml(_problems_case(plan), 2)
    for call in plan.calls:
        yield "\n    " + _xml(_case(plan, call, fail_on), 2)
    yield "\n  " + end


def junit_chunks(report: CheckReport) -> Iterator[str]:
    """The whole report as a JUnit XML document (UTF-8, with its declaration), in pieces:
    one test case at a time, never the whole tree in memory (100,000 calls made ~50 MB of
    elements). The text is what ElementTree writes for the whole tree, indented."""
    timestamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites", name="toolrun check")
    totals = [0, 0, 0, 0]
    for plan in report.plans:
        for i, n in enumerate(_suite_counts(plan, report.fail_on)):
            totals[i] += n
    for key, n in zip(("tests", "failures", "errors", "skipped"), totals, strict=True):
        root.set(key, str(n))
    root.set("time", _seconds(report.wall_ms))
    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    if not report.plans:
        yield ET.tostring(root, encoding="unicode") + "\n"
        return
    start, end = _tags(root)
    yield start
    for plan in report.plans:
        yield from _suite(plan, report.fail_on, timestamp)
    yield "\n" + end + "\n"


def junit_xml(report: CheckReport) -> str:
    """The whole report as one JUnit XML string (see :func:`junit_chunks`)."""
    return "".join(junit_chunks(report))


#: exec statuses that are a JUnit failure (the call ran or was refused) or skipped
_EXEC_FAILED = frozenset({"error", "timeout", "denied", "needs_approval"})
_EXEC_SKIPPED = frozenset({"skipped", "cancelled", "interrupted"})


def exec_junit_xml(plans: Sequence[str], results: Sequence[Result], wall_ms: float) -> str:
    """``toolrun exec --format junit``: one suite per plan, one test case per call; each
    autoVerify report of a call is a test case of its own, named for the verifier, with
    the first diagnostic's ``file`` and ``line`` (the attributes CI report readers turn
    into annotations) and every diagnostic in its text: a failure when the verifier blocks
    (the call failed for it), else the case's output."""
    timestamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites", name="toolrun exec")
    for plan in plans:
        mine = [r for r in results if r.plan == plan]
        suite = ET.SubElement(root, "testsuite", name=xml_text(plan), timestamp=timestamp)
        for result in mine:
            case = ET.SubElement(
                suite,
                "testcase",
                name=xml_text(f"{result.id} {result.tool}"),
                classname=xml_text(plan),
                time=_seconds(result.duration_ms),
                file=xml_text(loc.file if (loc := result.location) and loc.file else plan),
            )
            if loc is not None and loc.line:
                case.set("line", str(loc.line))
            status = str(result.status)
            if status in _EXEC_FAILED:
                failure = ET.SubElement(
                    case, "failure", message=xml_text(result.error or status), type=status
                )
                failure.text = xml_text(result.error or status)
            elif status in _EXEC_SKIPPED:
                ET.SubElement(case, "skipped", message=xml_text(result.error or status))
            for report in result.verify:
                _verify_case(suite, plan, result, report)
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        for key, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
            suite.set(key, str(sum(1 for c in cases if c.find(tag) is not None)))
        suite.set("time", _seconds(sum(r.duration_ms for r in mine)))
    suites = list(root)
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.set("time", _seconds(wall_ms))
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _verify_case(
    suite: ET.Element, plan: str, result: Result, report: Mapping[str, object]
) -> None:
    name = str(report.get("verifier"))
    found = report.get("diagnostics")
    diagnostics = [d for d in found if isinstance(d, dict)] if isinstance(found, list) else []
    case = ET.SubElement(
        suite,
        "testcase",
        name=xml_text(f"{result.id} verify {name}"),
        classname=xml_text(plan),
        time=_seconds(float(str(report.get("duration_ms", 0)))),
    )
    if diagnostics:
        case.set("file", xml_text(str(diagnostics[0].get("file"))))
        case.set("line", str(diagnostics[0].get("line")))
    status = report.get("status")
    if status in ("timeout", "failed"):
        error = ET.SubElement(case, "error", message=xml_text(str(report.get("message"))),
                              type=str(status))
        error.text = xml_text(str(report.get("message")))
        return
    errors = [d for d in diagnostics if d.get("severity") == "error"]
    lines = "".join(
        f"{d.get('file')}:{d.get('line')}:{d.get('column')}: {d.get('severity')} "
        f"{d.get('code') or ''} {d.get('message')}\n"
        for d in diagnostics
    )
    if errors and report.get("block"):  # a failure exactly when the call failed for it
        n = len(errors)
        failure = ET.SubElement(
            case,
            "failure",
            message=xml_text(f"{name}: {n} error{'s' if n != 1 else ''} where {result.id} "
                             "edited"),
            type="verify",
        )
        failure.text = xml_text(lines)
    elif lines:
        ET.SubElement(case, "system-out").text = xml_text(lines)
