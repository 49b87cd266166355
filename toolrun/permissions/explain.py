"""Render a :class:`Decision` and its trace as text (the CLI prints it; nothing here prints).

Sections: the call, the mode and where it came from, the workspace boundary
check, each Bash sub-command (or each file/URL) with its own verdict, every rule
considered (deny, ask, allow order) with its source and why it matched or not,
and the decisive step.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolrun.builtin_fields import MAIN_FIELDS
from toolrun.permissions.decision import DecidedBy, Decision, RuleTrace, TargetVerdict

#: The input fields that hold a built-in tool's main argument (NotebookEdit: Claude Code's).
PRIMARY_FIELDS: dict[str, tuple[str, ...]] = {**MAIN_FIELDS, "NotebookEdit": ("notebook_path",)}
_ORDER = {"deny": 0, "ask": 1, "allow": 2}


def call_label(tool: str, input: Mapping[str, Any]) -> str:
    """``Bash(git status)`` for a built-in's primary argument, else ``tool {json}``."""
    fields = PRIMARY_FIELDS.get(tool)
    if fields and set(input) <= set(fields) | {"description", "timeout"} and fields[0] in input:
        values = [str(input[f]) for f in fields if f in input]
        if all(isinstance(input[f], str) for f in fields if f in input):
            content = " ".join(values).replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            return f"{tool}({content})"
    return f"{tool} {json.dumps(dict(input), sort_keys=True, ensure_ascii=False)}"


def describe_decided_by(decided_by: DecidedBy) -> str:
    if decided_by.kind == "rule" and decided_by.rule is not None:
        return f"rule {decided_by.rule} ({decided_by.source})"
    return {
        "mode": "the permission mode",
        "readonly": "the built-in read-only command set",
        "boundary": "the workspace boundary",
        "protected": "a protected path",
        "default": "nothing (no rule decided: the default is to ask)",
        "sandbox": f"the sandbox settings ({decided_by.rule})",
    }.get(decided_by.kind, decided_by.kind)


def _target_line(target: TargetVerdict) -> str:
    where = target.target
    if target.resolved:
        where += f" -> {target.resolved}"
    verdict = target.decision or "no effect"
    return f"{target.what} {where} ({target.access}): {verdict} — {target.reason}"


def _rule_lines(rules: Iterable[RuleTrace], sources: Sequence[str] | None = None) -> list[str]:
    ordered = sorted(rules, key=lambda r: _ORDER[r.behavior])
    if not ordered:
        if sources is None:
            return ["  (none)"]
        if not sources:
            return ["  (none: no settings file was loaded)"]
        return [f"  (none: no permission rule in {', '.join(sources)})"]
    width = min(max(len(r.text) for r in ordered), 48)
    lines: list[str] = []
    for r in ordered:
        if r.decisive:
            status = "MATCHED, decisive"
        elif r.shadowed:
            status = "matched, shadowed"
        elif r.matched:
            status = "matched"
        else:
            status = "no match"
        lines.append(f"  {r.behavior:<5}  {r.text:<{width}}  {r.source}")
        lines.append(f"         {status}: {r.why}")
    return lines


def render_text(decision: Decision, sources: Sequence[str] | None = None) -> str:
    """The full explanation of one decision, as lines of plain text; ``sources`` are the
    config files the rules came from (as shown), said on their own line."""
    lines: list[str] = []
    lines.append(f"call:       {call_label(decision.tool, decision.input)}")
    lines.append(f"mode:       {decision.mode} (from {decision.mode_source})")
    cwd = f" (cwd {decision.cwd})" if decision.cwd != decision.workspace else ""
    lines.append(f"workspace:  {decision.workspace}{cwd}")
    if decision.sandbox is not None:
        lines.append(f"sandbox:    {decision.sandbox}")
    if sources is not None:
        lines.append(f"sources:    {', '.join(sources) if sources else 'none (built-in defaults)'}")

    lines.append("boundary:")
    if decision.boundary:
        for check in decision.boundary:
            where = check.path + (f" -> {check.resolved}" if check.resolved else "")
            verdict = f"inside {check.root}" if check.inside else "OUTSIDE the workspace"
            lines.append(f"  {check.what} {where}: {verdict}")
    else:
        lines.append("  no files or directories to check")

    if decision.problems:
        lines.append("not analysable (no rule can allow this command):")
        lines.extend(f"  - {p}" for p in decision.problems)

    if decision.subcommands:
        lines.append("sub-commands:")
        for sub in decision.subcommands:
            context = f"  [inside {sub.context}]" if sub.context else ""
            lines.append(f"  {sub.index + 1}. {' '.join(sub.command.split())}{context}")
            lines.append(f"     {sub.decision}: {sub.reason}")
            lines.extend(f"       {_target_line(t)}" for t in sub.targets)
    elif decision.targets:
        lines.append("checked:")
        lines.extend(f"  {_target_line(target)}" for target in decision.targets)

    lines.append("rules considered (deny, then ask, then allow; the first match decides):")
    lines.extend(_rule_lines(decision.rules, sources))

    lines.append(f"decided by: {describe_decided_by(decision.decided_by)}")
    lines.append(f"decision:   {decision.decision.upper()} — {decision.reason}")
    if decision.runs_in is not None:
        lines.append(f"runs in:    {decision.runs_in.place} — {decision.runs_in.why}")
    return "\n".join(lines)
