"""SARIF 2.1.0 for GitHub code scanning (and any SARIF viewer): ``--format sarif``, ``-o
FILE.sarif``.

One result per call that would be denied (``error``) or would ask (``warning``; ``error``
when ``--fail-on ask`` fails it), per problem of an input (``error``), per skipped record of
a session and per config warning (``warning``). Each result has its place (the plan file,
line and column, relative to the repository's root as ``SRCROOT``) and its rule: the
permission rule that decided (``toolrun/deny/Bash(curl *)``) or a stable id for the other
deciders (``toolrun/mode-ask``, ``toolrun/hook-deny``, ``toolrun/invalid-input``), each
described once in ``tool.driver.rules``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from toolrun.errors import Problem
    from toolrun.execution.results import Result
    from toolrun.render.github import AnnotationPaths
    from toolrun.report.models import CallCheck, CheckReport, PlanCheck

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/toolrun/toolrun"
_ROOT = "SRCROOT"

#: the fixed rules: id → (name, short description, help)
_FIXED: dict[str, tuple[str, str, str]] = {
    "toolrun/invalid-input": (
        "InvalidInput",
        "An input could not be read or validated; none of its calls was checked.",
        "Fix the plan or transcript at the place given; `toolrun validate FILE` shows them all.",
    ),
    "toolrun/skipped-record": (
        "SkippedRecord",
        "A record of a session log was not read (not JSON, a torn line, an unknown type).",
        "Check that the file is a whole session log; `--strict` makes this an error.",
    ),
    "toolrun/config-warning": (
        "ConfigWarning",
        "The configuration loads, but a key or a rule in it is ignored or worth a second look.",
        "Fix the setting at the place given; `--strict` makes config warnings errors.",
    ),
    "toolrun/call-failed": (
        "CallFailed",
        "A call ran and failed (tool error, timeout, cancelled).",
        "See the call's output with `toolrun show RUN CALL`.",
    ),
}
#: who decides when no rule does (DecidedBy.kind), in the rules' descriptions
_DECIDERS = {
    "mode": "the permission mode",
    "default": "the default for a call no rule covers",
    "boundary": "the workspace boundary",
    "protected": "the protection of critical paths",
    "readonly": "toolrun's read-only analysis",
    "sandbox": "the sandbox settings",
    "hook": "a PreToolUse hook",
    "user": "a person",
    "depends": "an earlier call of the plan it depends on",
    "invalid": "the tool's input check",
    "flag": "a command-line option",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One SARIF result before it is written: what, where, and which rule."""

    rule_id: str
    level: str  # error | warning | note
    message: str
    file: str | None
    line: int = 0
    column: int = 0
    properties: Mapping[str, Any] = field(default_factory=dict)
    #: the rule's own place (``toolrun.yaml:3``), shown as a related location
    rule_source: str | None = None


class _Rules:
    """The driver's rules, each once, in the order results first name them."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.rules: list[dict[str, Any]] = []

    def add(self, finding: Finding) -> int:
        known = self.index.get(finding.rule_id)
        if known is not None:
            return known
        self.index[finding.rule_id] = len(self.rules)
        self.rules.append(_descriptor(finding))
        return len(self.rules) - 1


def _descriptor(finding: Finding) -> dict[str, Any]:
    rule_id = finding.rule_id
    fixed = _FIXED.get(rule_id)
    if fixed is not None:
        name, short, help_text = fixed
    else:
        # toolrun/deny/Bash(curl *) (a permission rule) or toolrun/mode-ask (a decider)
        _, rest = rule_id.split("/", 1)
        if "/" in rest:
            behavior, rule = rest.split("/", 1)
            name = f"{behavior.capitalize()}Rule"
            short = f"A call matches the {behavior} rule {rule}."
            help_text = (
                f"The {behavior} rule {rule} decided these calls. Change the plan, or the "
                "rule if it is wrong; `toolrun explain-permission` shows the whole decision."
            )
        else:
            kind, _, decision = rest.rpartition("-")
            who = _DECIDERS.get(kind, kind)
            verb = "denies" if decision == "deny" else "asks for approval of"
            name = "".join(w.capitalize() for w in rest.split("-"))
            short = f"{who[0].upper()}{who[1:]} {verb} a call."
            help_text = (
                f"{short} `toolrun explain-permission` shows the whole decision; an allow "
                "rule for the call, or a change of mode, changes it."
            )
    descriptor: dict[str, Any] = {
        "id": rule_id,
        "name": name,
        "shortDescription": {"text": short},
        "help": {"text": help_text},
        "defaultConfiguration": {
            "level": "error"
            if rule_id.startswith("toolrun/deny/") or rule_id.endswith("-deny")
            else finding.level
        },
        "properties": {"tags": ["toolrun", "agent-permissions"]},
    }
    return descriptor


def call_rule_id(decision: str, kind: str, rule: str | None) -> str:
    """The rule a call's decision is reported under: the permission rule when one decided,
    else who decided and how."""
    if rule:
        return f"toolrun/{decision}/{rule}"
    return f"toolrun/{kind or 'unknown'}-{decision}"


def _uri(file: str) -> tuple[str, str | None]:
    """(uri, uriBaseId): relative paths under SRCROOT, others as file: URIs."""
    if os.path.isabs(file):
        return Path(file).as_uri(), None
    return quote(Path(file).as_posix()), _ROOT


def _location(file: str, line: int = 0, column: int = 0) -> dict[str, Any]:
    uri, base = _uri(file)
    artifact: dict[str, Any] = {"uri": uri}
    if base:
        artifact["uriBaseId"] = base
    physical: dict[str, Any] = {"artifactLocation": artifact}
    if line > 0:
        region: dict[str, Any] = {"startLine": line}
        if column > 0:
            region["startColumn"] = column
        physical["region"] = region
    return {"physicalLocation": physical}


def _source_location(source: str, paths: AnnotationPaths) -> dict[str, Any] | None:
    """``toolrun.yaml:3`` (how a rule's source is shown) as a location."""
    file, _, line = source.rpartition(":")
    if not file or not line.isdigit():
        return None
    where = _location(paths(file), int(line))
    where["message"] = {"text": "the rule is written here"}
    return where


def _result(finding: Finding, index: int, paths: AnnotationPaths) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "ruleIndex": index,
        "level": finding.level,
        "message": {"text": finding.message},
    }
    if finding.file:
        out["locations"] = [_location(finding.file, finding.line, finding.column)]
    related = _source_location(finding.rule_source, paths) if finding.rule_source else None
    if related is not None:
        related["id"] = 1
        out["relatedLocations"] = [related]
    # the same finding in the next run (same file, call, rule) is the same alert
    key = "\0".join((finding.rule_id, finding.file or "", finding.message))
    out["partialFingerprints"] = {"toolrunFinding/v1": hashlib.sha256(key.encode()).hexdigest()}
    if finding.properties:
        out["properties"] = dict(finding.properties)
    return out


def sarif_chunks(
    findings: Iterable[Finding], paths: AnnotationPaths, *, exit_code: int, command: str
) -> Iterator[str]:
    """The SARIF log of one run of toolrun, in pieces: the results one a line as they come
    (100,000 of them built as one tree took three times the memory of the check), then
    the rules they named (JSON members have no order, so the driver may come last)."""
    from toolrun import __version__

    rules = _Rules()
    root = paths.root.as_uri().rstrip("/") + "/"
    head = {
        "automationDetails": {"id": f"toolrun/{command}/"},
        "originalUriBaseIds": {_ROOT: {"uri": root}},
        "invocations": [{"executionSuccessful": True, "exitCode": exit_code}],
        "columnKind": "unicodeCodePoints",
    }
    yield (
        f'{{\n  "$schema": "{SCHEMA_URI}",\n  "version": "2.1.0",\n  "runs": [\n    {{\n'
        + "".join(f"      {_dumps(k)}: {_dumps(v)},\n" for k, v in head.items())
        + '      "results": ['
    )
    batch: list[str] = []
    first = True
    for finding in findings:
        batch.append(_dumps(_result(finding, rules.add(finding), paths)))
        if len(batch) >= 1000:
            yield ("\n        " if first else ",\n        ") + ",\n        ".join(batch)
            first, batch = False, []
    if batch:
        yield ("\n        " if first else ",\n        ") + ",\n        ".join(batch)
        first = False
    driver = {
        "name": "toolrun",
        "version": __version__,
        "semanticVersion": __version__,
        "informationUri": INFORMATION_URI,
        "rules": rules.rules,
    }
    tool = json.dumps({"driver": driver}, indent=2, ensure_ascii=False).replace("\n", "\n      ")
    yield ("\n      ]" if not first else "]") + f',\n      "tool": {tool}\n    }}\n  ]\n}}\n'


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


# -- check --------------------------------------------------------------------------------------


def problem_finding(
    problem: Problem, rule_id: str, level: str, paths: AnnotationPaths, fallback: str | None
) -> Finding:
    loc = problem.location
    message = f"{problem.path}: {problem.message}" if problem.path else problem.message
    return Finding(
        rule_id,
        level,
        message.removeprefix("warning: ") if level == "warning" else message,
        paths(loc.file) if loc and loc.file else fallback,
        loc.line if loc else 0,
        loc.column if loc else 0,
    )


def call_finding(plan: PlanCheck, call: CallCheck, fail_on: str, file: str) -> Finding:
    denied = call.decision == "deny"
    outcome = "would be denied" if denied else "would need approval"
    return Finding(
        call_rule_id(call.decision, call.kind, call.rule),
        "error" if denied or call.fails(fail_on) else "warning",
        f"{call.id} {call.tool}({call.target}) {outcome}: {call.why()}",
        file,
        call.line,
        call.column,
        {
            "decision": call.decision,
            "decidedBy": call.kind,
            "callId": call.id,
            "tool": call.tool,
            "turn": call.turn,
            **({"rule": call.rule} if call.rule else {}),
            **({"ruleSource": call.source} if call.source else {}),
        },
        call.source if call.rule else None,
    )


def check_findings(
    report: CheckReport, paths: AnnotationPaths, config_notes: Iterable[Problem] = ()
) -> Iterator[Finding]:
    """Config warnings first, then each input's problems, skipped records and the calls
    that would be denied or ask, in input order."""
    # code scanning shows a result only on a file: a warning of no place of its own is
    # on the first config file read
    config = paths(report.config_files[0]) if report.config_files else None
    for note in config_notes:
        yield problem_finding(note, "toolrun/config-warning", "warning", paths, config)
    for plan in report.plans:
        file = paths(plan.file)
        for problem in plan.problems:
            yield problem_finding(problem, "toolrun/invalid-input", "error", paths, file)
        for warning in plan.warnings:
            yield problem_finding(warning, "toolrun/skipped-record", "warning", paths, file)
        for call in plan.calls:
            if call.decision in ("deny", "ask"):
                where = paths(call.file) if call.file else file
                yield call_finding(plan, call, report.fail_on, where)


def check_sarif(
    report: CheckReport, paths: AnnotationPaths, config_notes: Iterable[Problem] = ()
) -> Iterator[str]:
    return sarif_chunks(
        check_findings(report, paths, config_notes),
        paths,
        exit_code=int(report.exit_code),
        command="check",
    )


# -- exec ---------------------------------------------------------------------------------------

_EXEC_FAILED = ("error", "timeout", "cancelled", "interrupted")


def exec_findings(
    results: Iterable[Result],
    paths: AnnotationPaths,
    config_notes: Iterable[Problem] = (),
    config_file: str | None = None,
) -> Iterator[Finding]:
    """Each call that was denied, needed an approval nobody gave, or failed."""
    config = paths(config_file) if config_file else None
    for note in config_notes:
        yield problem_finding(note, "toolrun/config-warning", "warning", paths, config)
    for r in results:
        status = str(r.status)
        by = r.decided_by
        if status == "denied" or status == "needs_approval":
            rule_id = call_rule_id(r.decision, by.kind, by.rule)
            level = "error" if status == "denied" else "warning"
            what = "was denied" if status == "denied" else "needed approval"
        elif status in _EXEC_FAILED:
            rule_id, level, what = "toolrun/call-failed", "error", status
        else:
            continue
        loc = r.location
        yield Finding(
            rule_id,
            level,
            f"{r.id} {r.tool} {what}: {r.error or status}",
            paths(loc.file) if loc and loc.file else paths(r.plan),
            loc.line if loc else 0,
            loc.column if loc else 0,
            {"status": status, "callId": r.id, "tool": r.tool, "decidedBy": by.kind},
            by.source if by.rule else None,
        )


def exec_sarif(
    results: Iterable[Result],
    paths: AnnotationPaths,
    exit_code: int,
    config_notes: Iterable[Problem] = (),
    config_file: str | None = None,
) -> Iterator[str]:
    findings = exec_findings(results, paths, config_notes, config_file)
    return sarif_chunks(findings, paths, exit_code=exit_code, command="exec")
