"""The PreToolUse part of an explain-permission trace, as text (no printing here)."""

from __future__ import annotations

import json

from toolrun.hooks.models import FinalDecision, PreToolUseResult


def render_hooks_text(pre: PreToolUseResult, final: FinalDecision) -> str:
    lines = ["PreToolUse hooks:"]
    if not pre.runs and not pre.skipped:
        lines.append("  (no hook matched)")
    for run in pre.runs:
        how = f"exit {run.exit_code}" if run.exit_code is not None else (run.failure or "no exit")
        if run.timed_out:
            how = "timed out"
        said = run.decision or "no decision"
        reason = f": {run.reason}" if run.reason else ""
        lines.append(f"  {run.command}  ({run.source})")
        lines.append(f"     {how}, {run.duration_ms} ms, {said}{reason}")
        if run.error:
            lines.append(f"     error: {run.error}")
        if run.updated_input is not None:
            lines.append(f"     updatedInput: {json.dumps(dict(run.updated_input))}")
    lines.extend(f"  skipped {s.command}  ({s.source}): {s.reason}" for s in pre.skipped)
    lines.extend(f"  problem: {problem}" for problem in pre.problems)
    if pre.updated_input is not None:
        lines.append(f"  the call was re-decided with: {json.dumps(dict(pre.updated_input))}")
    lines.extend(f"  note: {note}" for note in final.notes)
    by = final.decided_by
    who = by.kind + (f" {by.rule}" if by.rule else "") + (f" ({by.source})" if by.source else "")
    lines.append(f"final:      {final.decision.upper()} — {final.reason}  [decided by {who}]")
    return "\n".join(lines)
