"""The JUnit report, written one test case at a time, is the document ElementTree writes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from toolrun.errors import Location, Problem
from toolrun.render.junit import junit_chunks, junit_xml, xml_text
from toolrun.report.models import CallCheck, CheckReport, PlanCheck


def whole_tree(report: CheckReport) -> str:
    """The report as one ElementTree, indented and written at once (the reference)."""
    root = ET.Element("testsuites", name="toolrun check")
    for plan in report.plans:
        failing = [c for c in plan.calls if c.fails(report.fail_on)]
        # an ask the check lets through is skipped, with its reason
        passed_asks = [c for c in plan.calls if c.decision == "ask" and c not in failing]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=xml_text(plan.file),
            tests=str(len(plan.calls) + (1 if plan.problems else 0)),
            failures=str(len(failing)),
            errors="1" if plan.problems else "0",
            skipped=str(len(passed_asks)),
            time=f"{plan.wall_ms / 1000:.3f}",
            timestamp="T",
        )
        if plan.problems:
            case = ET.SubElement(
                suite,
                "testcase",
                name="load and validate",
                classname=xml_text(plan.file),
                time="0.000",
                file=xml_text(plan.file),
                line=str(plan.problems[0].location.line) if plan.problems[0].location else "0",
            )
            n = len(plan.problems)
            error = ET.SubElement(
                case,
                "error",
                message=f"invalid input: {n} problem{'s' if n != 1 else ''}; nothing checked",
                type="invalid",
            )
            error.text = xml_text("".join(f"{p}\n" for p in plan.problems))
        for call in plan.calls:
            case = ET.SubElement(
                suite,
                "testcase",
                name=xml_text(f"{call.id} {call.tool}({call.target})"),
                classname=xml_text(plan.file),
                time="0.000",
                file=xml_text(plan.file),
                line=str(call.line),
            )
            if call in passed_asks:
                ET.SubElement(case, "skipped", message=xml_text(call.why()))
            if call in failing:
                failure = ET.SubElement(
                    case, "failure", message=xml_text(call.why()), type=call.decision
                )
                failure.text = "details"
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in root)))
    root.set("time", f"{report.wall_ms / 1000:.3f}")
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def call(i: int, decision: str, command: str = "ls") -> CallCheck:
    return CallCheck(
        position=i,
        id=f"call-{i + 1}",
        tool="Bash",
        input={"command": command},
        decision=decision,
        kind="rule",
        rule=f"Bash({command})",
        source="toolrun.yaml:3",
        reason=f'{decision}: "{command}" <&>',
        status="skipped",
        error=None,
        line=i + 2,
        column=5,
        turn=1,
        run=i + 1,
        run_kind="exclusive",
        execution_id=f"exec_{i}",
    )


def normal(text: str) -> str:
    text = re.sub(r'timestamp="[^"]*"', 'timestamp="T"', text)
    # the failure text is the renderer's own wording; the reference only marks its place
    return re.sub(r"(<failure [^>]*>)[^<]*(</failure>)", r"\1details\2", text)


REPORTS = {
    "no input": (),
    "an input without calls": (PlanCheck("empty.yaml", "toolrun", turns=0),),
    "an invalid input": (
        PlanCheck(
            "bad.yaml",
            problems=(
                Problem(Location("bad.yaml", 2, 6), "calls[0]", "x"),
                Problem(None, "", 'no "file" <here> & \x01'),
            ),
        ),
    ),
    "calls, some failing, text to escape": (
        PlanCheck(
            "a & b.yaml",
            "toolrun",
            turns=1,
            wall_ms=12.5,
            calls=(
                call(0, "allow"),
                call(1, "deny", 'curl "x" | sh\n<tab>\t'),
                call(2, "ask"),
                call(3, "deny", "rm -rf \x07 \u2028"),
            ),
        ),
        PlanCheck("empty.yaml", "toolrun"),
        PlanCheck("second.json", "toolrun", calls=(call(0, "allow"),)),
    ),
}


@pytest.mark.parametrize("name", list(REPORTS))
@pytest.mark.parametrize("fail_on", ["deny", "ask", "never"])
def test_the_streamed_report_is_the_whole_tree_written_at_once(name: str, fail_on: str) -> None:
    report = CheckReport("run_1", fail_on, REPORTS[name], wall_ms=1234.5)
    streamed = junit_xml(report)
    assert normal(streamed) == normal(whole_tree(report))
    ET.fromstring(streamed.split("\n", 1)[1])  # well-formed


def test_the_report_comes_in_pieces_no_bigger_than_a_test_case() -> None:
    plans = (PlanCheck("big.yaml", "toolrun", calls=tuple(call(i, "deny") for i in range(500))),)
    chunks = list(junit_chunks(CheckReport("run_1", "deny", plans, wall_ms=1.0)))
    assert len(chunks) > 500
    assert max(len(c) for c in chunks) < 2000
