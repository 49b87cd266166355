"""The check report as JSON: each call's result record (design §6), and the whole report.

A result record has the keys ``exec`` writes (``Result.as_json``), plus where the call
would run; the JSON report (``--format json``) is a head (inputs, sources, problems, the
summary) followed by every record, streamed in chunks, never built as one string.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from toolrun.report.models import CallCheck, CheckReport, PlanCheck


def result_json(run_id: str, plan: PlanCheck, call: CallCheck) -> dict[str, Any]:
    """The result record of design §6 (the keys ``exec`` uses), plus where it ran.

    Written out rather than through ``Result.as_json``: a check of 100,000 calls spent a
    third of its report building Result objects only to turn them into dicts. A test
    keeps the two the same.
    """
    out: dict[str, Any] = {
        "index": call.position,
        "id": call.id,
        "execution_id": call.execution_id,
        "run_id": run_id,
        "plan": plan.file,
        "tool": call.tool,
        "input": call.input if type(call.input) is dict else dict(call.input),
        "decision": call.decision,
        "decided_by": {"kind": call.kind, "rule": call.rule, "source": call.source},
        "runs_in": call.runs_in,
        "runs_in_why": call.runs_in_why,
        "status": call.status,
        "output": "",
        "error": call.error,
        "started_at": None,
        "finished_at": None,
        "wait_ms": 0.0,
        "duration_ms": 0.0,
        "attempts": 0,
        "aborted_before_launch": False,
        "location": (
            {"file": call.file or plan.file, "line": call.line, "column": call.column}
            if call.line
            else None
        ),
    }
    if call.hooks:
        out["hooks"] = [dict(h) for h in call.hooks]
    if call.origin:
        out["origin"] = call.origin
    if call.rebased:
        out["rebased"] = [
            {"field": f, "recorded": recorded, "rebased": new} for f, recorded, new in call.rebased
        ]
    out["reason"] = call.reason
    out["turn"] = call.turn
    out["run"] = call.run
    out["run_kind"] = call.run_kind
    return out


def result_lines(run_id: str, plan: PlanCheck) -> Callable[[CallCheck], str]:
    """``json.dumps(result_json(run_id, plan, call), ensure_ascii=False)`` for the calls of
    ``plan``, written from a template: building each record's dict only to encode it was
    more than half of a big JSON report. A call of an unusual shape (hooks, an origin,
    rebased values, a value of another type than usual) is encoded the general way; a
    property test holds the two to the same text."""
    import json.encoder

    encoder = json.JSONEncoder(ensure_ascii=False)
    text = json.encoder.encode_basestring  # (the encoder's own, for ensure_ascii=False)
    general = encoder.encode
    head = f', "run_id": {text(run_id)}, "plan": {text(plan.file)}, "tool": '
    here = text(plan.file)
    fixed = (
        ', "output": "", "error": %s, "started_at": null, "finished_at": null, "wait_ms": 0.0, '
        '"duration_ms": 0.0, "attempts": 0, "aborted_before_launch": false, "location": '
    )
    shapes: dict[tuple[type, ...], bool] = {}  # the field types of a record: as usual?
    encode_input = _value_encoder(encoder)

    def line(c: CallCheck) -> str:
        shape = tuple(map(type, c))
        usual = shapes.get(shape)
        if usual is None:
            usual = shapes[shape] = _usual_shape(shape)
        if not usual or c.hooks or c.origin or c.rebased:
            return general(result_json(run_id, plan, c))
        rule, source, error, place, why = c.rule, c.source, c.error, c.runs_in, c.runs_in_why
        if c.line:
            where = text(c.file) if c.file else here
            location = f'{{"file": {where}, "line": {c.line}, "column": {c.column}}}'
        else:
            location = "null"
        return (
            f'{{"index": {c.position}, "id": {text(c.id)}, "execution_id": '
            f'{text(c.execution_id)}{head}{text(c.tool)}, "input": '
            f"{encode_input(c.input if type(c.input) is dict else dict(c.input))}, "
            f'"decision": {text(c.decision)}, "decided_by": {{"kind": {text(c.kind)}, '
            f'"rule": {"null" if rule is None else text(rule)}, '
            f'"source": {"null" if source is None else text(source)}}}, '
            f'"runs_in": {"null" if place is None else text(place)}, '
            f'"runs_in_why": {"null" if why is None else text(why)}, '
            f'"status": {text(c.status)}'
            f"{fixed % ('null' if error is None else text(error))}{location}, "
            f'"reason": {text(c.reason)}, "turn": {c.turn}, "run": {c.run}, '
            f'"run_kind": {text(c.run_kind)}}}'
        )

    return line


def _value_encoder(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode`` (an encoder of ``ensure_ascii=False``, the default separators)
    for a dict or a list, its C encoder made once rather than once a call as ``encode``
    makes it (two thirds of its time on a small dict)."""
    import json.encoder

    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - an interpreter without the C accelerator
        return encoder.encode
    markers: dict[int, Any] = {}  # what catches a cycle: empty again once a value is done
    made = make(markers, encoder.default, json.encoder.encode_basestring, None, ": ", ", ",
                False, False, True)  # fmt: skip

    def encode(value: Any) -> str:
        try:
            return "".join(made(value, 0))
        except BaseException:
            markers.clear()
            raise

    return encode


_INT_FIELDS = frozenset(
    CallCheck._fields.index(f) for f in ("position", "line", "column", "turn", "run")
)


_STR_FIELDS = frozenset(
    CallCheck._fields.index(f)
    for f in ("id", "tool", "decision", "kind", "reason", "status", "run_kind",
              "execution_id", "origin", "file")
)  # fmt: skip


_OPTIONAL_FIELDS = frozenset(
    CallCheck._fields.index(f) for f in ("rule", "source", "error", "runs_in", "runs_in_why")
)


def _usual_shape(types: tuple[type, ...]) -> bool:
    """Whether a record of fields of these types is one ``result_lines`` writes from its
    template: ints, strings and optional strings where check puts them (not a bool or a
    str subclass, which the general encoder writes its own way)."""
    return len(types) == len(CallCheck._fields) and all(
        t is int if i in _INT_FIELDS
        else t is str if i in _STR_FIELDS
        else t is str or t is type(None) if i in _OPTIONAL_FIELDS
        else True
        for i, t in enumerate(types)
    )  # fmt: skip


# the result statuses (toolrun.execution.results.Status), for the JSON summary
STATUSES = (
    "ok",
    "error",
    "denied",
    "needs_approval",
    "timeout",
    "cancelled",
    "interrupted",
    "skipped",
)


def json_report(report: CheckReport) -> Iterator[str]:
    """``{"run_id", "plans", "inputs", "problems", "summary", "results": [...]}``, streamed."""
    from toolrun.errors import problem_json

    counts = report.counts()
    enforced, unenforced = report.enforced()
    head: dict[str, Any] = {
        "run_id": report.run_id,
        "plans": [p.file for p in report.plans],
        "inputs": [
            {
                "file": p.file,
                "format": p.format,
                "name": p.name,
                "turns": p.turns,
                "calls": len(p.calls),
                "runs": len(p.runs),
                "valid": not p.problems,
            }
            for p in report.plans
        ],
        "sources": list(report.config_files),
        "config_warnings": list(report.config_warnings),
        "config_notes": [problem_json(p) for p in report.config_notes],
        "problems": [problem_json(p) for p in report.problems],
        "warnings": [
            {
                "file": w.location.file if w.location else None,
                "line": w.location.line if w.location else None,
                "column": w.location.column if w.location else None,
                "message": w.message,
                "text": str(w),
            }
            for plan in report.plans
            for w in plan.warnings
        ],
        **({"shard": shard_json(report)} if report.shard is not None else {}),
        "summary": {
            # the keys of exec's summary (result statuses), then check's own
            **dict.fromkeys(STATUSES, 0),
            **Counter(call.status for _, call in report.calls),
            "total": counts["calls"],
            **counts,
            "fail_on": report.fail_on,
            # what --fail-on let through: never "nothing fails" of an ask it passed (#26)
            "not_failing": report.not_failing(counts),
            # would the calls allowed on toolrun's judgement run in jails here (#25)
            "enforced": enforced,
            "enforced_reason": unenforced,
            "exit_code": int(report.exit_code),
            "wall_ms": round(report.wall_ms, 1),
        },
    }
    yield json.dumps(head, indent=2, ensure_ascii=False)[:-2] + ',\n  "results": ['
    records = report_lines(report)
    first = True
    for batch in batches(records):
        yield ("\n    " if first else ",\n    ") + ",\n    ".join(batch)
        first = False
    yield "\n  ]\n}\n" if not first else "]\n}\n"


def report_lines(report: CheckReport) -> Iterator[str]:
    """Every call's result record, encoded (``result_json`` as JSON), in report order."""
    for plan in report.plans:
        yield from map(result_lines(report.run_id, plan), plan.calls)


def batches(items: Iterator[str], size: int = 1000) -> Iterator[list[str]]:
    """Records in lists of ``size``: a few large writes instead of one per call."""
    batch: list[str] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def shard_json(report: CheckReport) -> dict[str, Any]:
    """What merging needs besides the results: which shard, of which inputs and config, and
    for each input its place in the whole, its problem and warning counts and its time."""
    shard = report.shard
    assert shard is not None
    return {
        "index": shard.index,
        "count": shard.count,
        "total": shard.total,
        "inputs_digest": shard.inputs_digest,
        "config_digest": report.config_digest,
        "config_files": list(report.config_files),
        "inputs": [
            {
                "position": position,
                "problems": len(plan.problems),
                "warnings": len(plan.warnings),
                "wall_ms": round(plan.wall_ms, 1),
            }
            for position, plan in zip(shard.positions, report.plans, strict=True)
        ],
    }

