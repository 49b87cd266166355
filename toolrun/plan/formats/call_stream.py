"""A call stream: ``{"tool", "input", "id"?, "timeout"?}`` a line, read as ``exec -`` reads a
file piped to it: consecutive lines form turns of up to the turn's call limit. Written by
people and programs, not recorded from an agent: every line must be a valid call."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolrun.errors import PlanError
from toolrun.plan.importers import _Builder, _JsonLines


def recognise(obj: Mapping[str, Any]) -> bool:
    return "tool" in obj


def load(lines: _JsonLines, builder: _Builder, path: Path) -> None:
    from toolrun.plan.loader import call_from_json_line

    per_turn = builder.per_turn
    in_turn = 0
    for number, raw in enumerate(lines.text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        if in_turn == per_turn:
            builder.end_turn()
            in_turn = 0
        in_turn += 1
        try:
            call = call_from_json_line(
                line,
                file=builder.file,
                line=number,
                index=builder.index,
                turn=len(builder.turns),
                registry=builder.registry,
                seen_ids=builder.seen,
            )
        except PlanError as exc:
            builder.problems.extend(exc.problems)
        else:
            builder.add(call)
        builder.index += 1
