"""``check --merge-reports``: the JSON reports of ``check --shard K/N`` jobs as one check.

Each shard's report carries a ``shard`` block (which shard of how many, a digest of the
whole list of inputs and of the config, and each input's place in that list). The merge
checks that the reports are every shard of one split, exactly once, of the same inputs
under the same config, then rebuilds the report the unsharded check would have made: the
same inputs in the same order, the same calls, problems and exit code.

Reports are parsed with the C JSON decoder; positions are computed only when a report
is malformed, so every error names the file, line and column of what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolrun.errors import InvalidInputError, Location, Problem
from toolrun.report.models import FAIL_ON, CallCheck, CheckReport, PlanCheck
from toolrun.yamlfile import Document, DocumentError, PathPart, format_path, parse_json, read_text

_DECISIONS = ("allow", "ask", "deny")
_NUMBER = (int, float)


class _Malformed(Exception):
    """One thing wrong in one report, at ``path`` (keys and indexes)."""

    def __init__(self, path: Sequence[PathPart], message: str) -> None:
        super().__init__(message)
        self.path = tuple(path)
        self.message = message


@dataclass
class _Report:
    """One report as read: its shown name, its text (to locate errors) and its data."""

    file: str
    text: str
    data: dict[str, Any]
    _doc: list[Document | None]

    def locate(self, path: Sequence[PathPart]) -> Location:
        """Where ``path`` is written (parsing the text again with positions, once)."""
        if not self._doc:
            try:
                self._doc.append(parse_json(self.text, self.file))
            except DocumentError:  # pragma: no cover - the text was valid JSON already
                self._doc.append(None)
        doc = self._doc[0]
        return doc.value_location(path) if doc is not None else Location(self.file, 1, 1)

    def problem(self, path: Sequence[PathPart], message: str) -> Problem:
        return Problem(self.locate(path), format_path(path), message)

    @property
    def shard(self) -> Mapping[str, Any]:
        return self.data["shard"]  # type: ignore[no-any-return]

    @property
    def label(self) -> str:
        return f"{self.file} (shard {self.shard['index']}/{self.shard['count']})"


def merge_reports(files: Sequence[tuple[str, Path]], *, fail_on: str | None) -> CheckReport:
    """The one report of the shards whose JSON reports are ``files`` ((shown name, path));
    ``fail_on`` None: the one the shards were checked with. InvalidInputError listing what
    is wrong (located) when the reports are malformed or are not one sharded check."""
    reports: list[_Report] = []
    problems: list[Problem] = []
    for shown, path in files:
        try:
            reports.append(_read(shown, path))
        except InvalidInputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InvalidInputError(problems)
    if not reports:
        raise InvalidInputError([Problem(None, "", "no report to merge")])
    _check_one_split(reports)
    chosen = fail_on if fail_on is not None else _common_fail_on(reports)
    placed: list[tuple[int, PlanCheck]] = []
    for report in reports:
        placed.extend(_plans(report))
    placed.sort(key=lambda item: item[0])
    first = reports[0]
    return CheckReport(
        run_id=str(first.data["run_id"]),
        fail_on=chosen,
        plans=tuple(plan for _, plan in placed),
        wall_ms=sum(float(r.data["summary"]["wall_ms"]) for r in reports),
        config_warnings=tuple(str(w) for w in first.data["config_warnings"]),
        config_notes=_notes(first),
        config_files=tuple(str(f) for f in first.shard["config_files"]),
    )


def _notes(report: _Report) -> tuple[Problem, ...]:
    """The config warnings, located, of a report that has them (older ones: unlocated)."""
    found = report.data.get("config_notes")
    if not isinstance(found, list):
        return tuple(Problem(None, "", str(w)) for w in report.data["config_warnings"])
    notes = []
    for note in found:
        line = note.get("line")
        file = note.get("file")
        located = isinstance(file, str) and isinstance(line, int) and not isinstance(line, bool)
        column = note.get("column")
        loc = Location(file, line, column if isinstance(column, int) else 1) if located else None
        notes.append(Problem(loc, str(note.get("path") or ""), str(note.get("message", ""))))
    return tuple(notes)


# -- reading one report -----------------------------------------------------------------------


def _read(shown: str, path: Path) -> _Report:
    try:
        text = read_text(path, shown)
        try:
            data = json.loads(text, object_hook=_SharedValues())
        except (ValueError, RecursionError):
            parse_json(text, shown)  # raises, located, with the decoder's own message
            raise  # pragma: no cover - parse_json accepts only what json.loads does
    except DocumentError as exc:
        raise InvalidInputError([exc.problem]) from None
    report = _Report(shown, text, data, [])
    try:
        _validate(data)
    except _Malformed as exc:
        raise InvalidInputError([report.problem(exc.path, exc.message)]) from None
    return report


class _SharedValues:
    """One string object for the values every record repeats (run id, plan, tool, decision,
    rule, ...): the decoder makes a new one each time, a fifth of a big report's memory."""

    KEYS = frozenset(
        (
            "run_id",
            "plan",
            "tool",
            "decision",
            "status",
            "run_kind",
            "kind",
            "rule",
            "source",
            "file",
            "output",
        )
    )

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, obj: dict[str, Any]) -> dict[str, Any]:
        for key in self.KEYS.intersection(obj):
            value = obj[key]
            if type(value) is str:  # an equal string: nothing a reader could tell apart
                obj[key] = self.seen.setdefault(value, value)
        return obj


def _validate(data: Any) -> None:
    """_Malformed at the first thing a merge cannot use."""
    if not isinstance(data, dict):
        raise _Malformed((), f"a check report is a JSON object, not {_kind(data)}")
    if "shard" not in data:
        raise _Malformed(
            (),
            "not the JSON report of a sharded check (made by toolrun check --shard K/N "
            "--format json, or -o FILE.json)",
        )
    for key, kind in (
        ("run_id", str),
        ("inputs", list),
        ("config_warnings", list),
        ("problems", list),
        ("warnings", list),
        ("summary", dict),
        ("results", list),
        ("shard", dict),
    ):
        _field(data, (), key, kind)
    if "config_notes" in data:  # reports of older versions have only config_warnings
        notes = _field(data, (), "config_notes", list)
        for i, note in enumerate(notes):
            _object(note, ("config_notes", i))
    summary = data["summary"]
    fail_on = _field(summary, ("summary",), "fail_on", str)
    if fail_on not in FAIL_ON:
        raise _Malformed(("summary", "fail_on"), f"expected one of {', '.join(FAIL_ON)}")
    _field(summary, ("summary",), "wall_ms", _NUMBER)
    shard = data["shard"]
    count = _field(shard, ("shard",), "count", int)
    index = _field(shard, ("shard",), "index", int)
    if count < 1 or not 1 <= index <= count:
        raise _Malformed(("shard", "index"), f"shard {index}/{count} does not exist")
    total = _field(shard, ("shard",), "total", int)
    for key in ("inputs_digest", "config_digest"):
        _field(shard, ("shard",), key, str)
    _field(shard, ("shard",), "config_files", list)
    placed = _field(shard, ("shard",), "inputs", list)
    inputs = data["inputs"]
    if len(placed) != len(inputs):
        raise _Malformed(
            ("shard", "inputs"),
            f"{len(placed)} entries for the report's {len(inputs)} inputs",
        )
    for i, entry in enumerate(placed):
        where = ("shard", "inputs", i)
        _object(entry, where)
        position = _field(entry, where, "position", int)
        if not 0 <= position < total:
            raise _Malformed((*where, "position"), f"{position} is not among the {total} inputs")
        for key in ("problems", "warnings"):
            _field(entry, where, key, int)
        _field(entry, where, "wall_ms", _NUMBER)
    calls: dict[str, int] = {}
    for i, entry in enumerate(inputs):
        at = ("inputs", i)
        _object(entry, at)
        file = _field(entry, at, "file", str)
        if file in calls:
            raise _Malformed((*at, "file"), f"{file!r} is already an input of this report")
        calls[file] = _field(entry, at, "calls", int)
        _field(entry, at, "turns", int)
        for key in ("format", "name"):
            _field(entry, at, key, (str, type(None)))
    for key in ("problems", "warnings"):
        _problems_valid(data, key)
    _results_valid(data["results"], calls)


def _problems_valid(data: Mapping[str, Any], key: str) -> None:
    counted = sum(int(entry[key]) for entry in data["shard"]["inputs"])
    if counted != len(data[key]):
        raise _Malformed((key,), f"{len(data[key])} {key} where its inputs count {counted}")
    for i, entry in enumerate(data[key]):
        where = (key, i)
        _object(entry, where)
        _field(entry, where, "message", str)
        _field(entry, where, "file", (str, type(None)))
        for part in ("line", "column"):
            _field(entry, where, part, (int, type(None)))


# (key, expected types) of the result records a merge reads
_RESULT_FIELDS: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("index", int),
    ("id", str),
    ("execution_id", str),
    ("plan", str),
    ("tool", str),
    ("input", dict),
    ("decision", str),
    ("decided_by", dict),
    ("status", str),
    ("error", (str, type(None))),
    ("location", (dict, type(None))),
    ("reason", str),
    ("turn", int),
    ("run", int),
    ("run_kind", str),
)


def _results_valid(results: list[Any], calls: Mapping[str, int]) -> None:
    seen: dict[str, int] = dict.fromkeys(calls, 0)
    for i, record in enumerate(results):
        where = ("results", i)
        _object(record, where)
        for key, kind in _RESULT_FIELDS:
            _field(record, where, key, kind)
        plan = record["plan"]
        if plan not in seen:
            raise _Malformed((*where, "plan"), f"{plan!r} is not one of the report's inputs")
        seen[plan] += 1
        if record["decision"] not in _DECISIONS:
            raise _Malformed((*where, "decision"), f"expected one of {', '.join(_DECISIONS)}")
        by = record["decided_by"]
        _field(by, (*where, "decided_by"), "kind", str)
        for key in ("rule", "source"):
            _field(by, (*where, "decided_by"), key, (str, type(None)))
        loc = record["location"]
        if loc is not None:
            _field(loc, (*where, "location"), "file", str)
            for key in ("line", "column"):
                _field(loc, (*where, "location"), key, int)
        if "origin" in record:
            _field(record, where, "origin", str)
        for key in ("runs_in", "runs_in_why"):  # (a report of before #25 has neither)
            if key in record:
                _field(record, where, key, (str, type(None)))
        _entries_valid(record, where)
    for plan, count in seen.items():
        if count != calls[plan]:
            raise _Malformed(
                ("results",), f"{count} results for {plan!r}, whose input counts {calls[plan]}"
            )


def _entries_valid(record: Mapping[str, Any], where: tuple[PathPart, ...]) -> None:
    """``hooks`` (objects, their ``runs`` objects) and ``rebased`` (field, recorded and
    rebased strings), as the reports show them."""
    if "hooks" in record:
        for i, hook in enumerate(_field(record, where, "hooks", list)):
            _object(hook, (*where, "hooks", i))
            if hook.get("runs") is not None:
                runs = _field(hook, (*where, "hooks", i), "runs", list)
                for j, run in enumerate(runs):
                    _object(run, (*where, "hooks", i, "runs", j))
    if "rebased" in record:
        for i, entry in enumerate(_field(record, where, "rebased", list)):
            _object(entry, (*where, "rebased", i))
            for key in ("field", "recorded", "rebased"):
                _field(entry, (*where, "rebased", i), key, str)


def _object(value: Any, path: tuple[PathPart, ...]) -> None:
    if not isinstance(value, dict):
        raise _Malformed(path, f"expected an object, not {_kind(value)}")


def _field(
    data: Mapping[str, Any],
    path: tuple[PathPart, ...],
    key: str,
    kind: type | tuple[type, ...],
) -> Any:
    if key not in data:
        raise _Malformed(path, f"missing {key!r}")
    value = data[key]
    # bool is an int to Python, never to a report
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        names = kind if isinstance(kind, tuple) else (kind,)
        expected = " or ".join(_KINDS[k] for k in names)
        raise _Malformed((*path, key), f"expected {expected}, not {_kind(value)}")
    return value


_KINDS: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def _kind(value: Any) -> str:
    return _KINDS.get(type(value), type(value).__name__)


# -- one split ---------------------------------------------------------------------------------


def _check_one_split(reports: Sequence[_Report]) -> None:
    """Every shard of one split of one list of inputs, under one config, exactly once."""
    first = reports[0]
    problems: list[Problem] = []
    by_index: dict[int, _Report] = {}
    checks: tuple[tuple[str, Callable[[_Report], str]], ...] = (
        (
            "count",
            lambda r: (
                f"it is split {r.shard['count']} ways, {first.label} {first.shard['count']} ways"
            ),
        ),
        (
            "inputs_digest",
            lambda r: (
                f"its inputs are not those of {first.label} (another list "
                "of plans, or another order)"
            ),
        ),
        ("config_digest", lambda r: f"it was checked under another config than {first.label}"),
    )
    for report in reports:
        for key, why in checks:
            if report is not first and report.shard[key] != first.shard[key]:
                problems.append(
                    report.problem(("shard", key), f"not a shard of one check: {why(report)}")
                )
                break
        else:
            index = int(report.shard["index"])
            if index in by_index:
                problems.append(
                    report.problem(
                        ("shard", "index"), f"shard {index} again (also {by_index[index].file})"
                    )
                )
            by_index[index] = report
    if problems:
        raise InvalidInputError(problems)
    count = int(first.shard["count"])
    missing = [str(k) for k in range(1, count + 1) if k not in by_index]
    if missing:
        raise InvalidInputError(
            [
                Problem(
                    None,
                    "",
                    f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} of {count} "
                    f"missing: merge the reports of all {count} shards",
                )
            ]
        )
    positions = sorted(p["position"] for r in reports for p in r.shard["inputs"])
    if positions != list(range(int(first.shard["total"]))):
        raise InvalidInputError(
            [Problem(None, "", "the shards' inputs do not cover the inputs exactly once")]
        )


def _common_fail_on(reports: Sequence[_Report]) -> str:
    first = reports[0]
    value = str(first.data["summary"]["fail_on"])
    for report in reports[1:]:
        other = report.data["summary"]["fail_on"]
        if other != value:
            raise InvalidInputError(
                [
                    report.problem(
                        ("summary", "fail_on"),
                        f"checked with --fail-on {other}, {first.file} with --fail-on "
                        f"{value}: choose one with --fail-on",
                    )
                ]
            )
    return value


# -- rebuilding the inputs -----------------------------------------------------------------------


def _plans(report: _Report) -> list[tuple[int, PlanCheck]]:
    """(position in the whole list, the input as checked) for each input of ``report``."""
    data = report.data
    calls: dict[str, list[CallCheck]] = {entry["file"]: [] for entry in data["inputs"]}
    for record in data["results"]:
        calls[record["plan"]].append(_call(record))
    problems = iter(data["problems"])
    warnings = iter(data["warnings"])
    out: list[tuple[int, PlanCheck]] = []
    for entry, place in zip(data["inputs"], data["shard"]["inputs"], strict=True):
        file = entry["file"]
        plan_calls = tuple(calls[file])
        out.append(
            (
                place["position"],
                PlanCheck(
                    file=file,
                    format=entry["format"],
                    name=entry["name"],
                    turns=entry["turns"],
                    runs=_runs(plan_calls),
                    calls=plan_calls,
                    problems=tuple(_problem(next(problems)) for _ in range(place["problems"])),
                    wall_ms=float(place["wall_ms"]),
                    warnings=tuple(_problem(next(warnings)) for _ in range(place["warnings"])),
                ),
            )
        )
    return out


def _call(record: Mapping[str, Any]) -> CallCheck:
    loc = record["location"]
    by = record["decided_by"]
    return CallCheck(
        position=record["index"],
        id=record["id"],
        tool=record["tool"],
        input=record["input"],
        decision=record["decision"],
        kind=by["kind"],
        rule=by.get("rule"),
        source=by.get("source"),
        reason=record["reason"],
        status=record["status"],
        error=record["error"],
        line=loc["line"] if loc else 0,
        column=loc["column"] if loc else 0,
        turn=record["turn"],
        run=record["run"],
        run_kind=record["run_kind"],
        execution_id=record["execution_id"],
        hooks=tuple(record.get("hooks", ())),
        rebased=tuple(
            (str(r["field"]), str(r["recorded"]), str(r["rebased"]))
            for r in record.get("rebased", ())
        ),
        origin=record.get("origin", ""),
        file=loc["file"] if loc and loc["file"] != record["plan"] else "",
        runs_in=record.get("runs_in"),
        runs_in_why=record.get("runs_in_why"),
    )


def _runs(calls: Sequence[CallCheck]) -> tuple[tuple[int, str, int], ...]:
    """(turn, kind, calls) of each run, in order, from the calls' run numbers."""
    runs: dict[int, list[Any]] = {}
    for call in calls:
        if call.run:
            found = runs.setdefault(call.run, [call.turn, call.run_kind, 0])
            found[2] += 1
    return tuple((turn, kind, n) for _, (turn, kind, n) in sorted(runs.items()))


def _problem(entry: Mapping[str, Any]) -> Problem:
    line = entry["line"]
    loc = Location(entry["file"], line, entry["column"]) if line is not None else None
    path = entry.get("path")
    if not isinstance(path, str):  # warnings carry their text, not their path
        where = f"{loc}: " if loc is not None else ""
        text = str(entry.get("text", ""))
        tail = f": {entry['message']}"
        path = (
            text[len(where) : -len(tail)] if text.startswith(where) and text.endswith(tail) else ""
        )
    return Problem(loc, path, entry["message"])
