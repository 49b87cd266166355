"""Plans from what agents leave behind: transcripts and call streams (design §2).

Beside toolrun's own plans (YAML or JSON), toolrun reads the formats its registry lists
(:mod:`toolrun.plan.formats`: Claude Code sessions and ``stream-json`` output, Codex
rollouts and ``codex exec --json`` output, Gemini CLI sessions, Anthropic, OpenAI Chat
Completions and Responses API conversations, chat messages a line, call streams), each
detected from its content or named with ``--from``.

Every call keeps its file, line and column; every problem is located and all of them are
reported at once (:class:`PlanError`), with the same messages as a plan's (unknown tool,
bad input for the tool, duplicate id). An input must yield calls: one toolrun cannot read
as any format, or whose records hold no call, is a located problem unless
``allow_empty``. A recorded call whose input its tool would have refused is kept, with
:class:`~toolrun.plan.models.InvalidInput` params: it gets an ``error`` result (as the
agent's own tool answered it) and the rest is decided.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from toolrun.errors import Location, PlanError, Problem
from toolrun.plan.formats import BY_NAME, FORMATS, LINE_FORMATS, document_format, record_format
from toolrun.plan.models import (
    MAX_CALLS_PER_TURN,
    Call,
    InvalidInput,
    Plan,
    Turn,
    turn_limit_message,
)
from toolrun.tools.inputs import validate_input
from toolrun.tools.registry import ToolRegistry
from toolrun.validation import Invalid, problems_from_validation
from toolrun.yamlfile import (
    NUL_MESSAGE,
    Document,
    DocumentError,
    PathPart,
    format_path,
    nul_paths,
    parse_json,
    parse_text,
    read_text,
)

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

    from toolrun.plan.foreign import ForeignInput
    from toolrun.plan.loader import Select

__all__ = ["FORMATS", "Imported", "load_input"]

JSONL_SUFFIXES: Final = (".jsonl", ".ndjson")
#: what an input without calls is told (an empty or unrecognised one too)
ALLOW_EMPTY_HINT: Final = "--allow-empty accepts an input without calls"


@dataclass(frozen=True, slots=True)
class Imported:
    """A loaded input: the plan and the format it was read as."""

    plan: Plan
    format: str
    # the working directory each call was recorded in (call index -> absolute path), for
    # the formats that record one
    cwds: Mapping[int, str] = field(default_factory=dict)
    # records of a session log that were skipped (not JSON objects, a torn last line,
    # unknown record types), located; with strict=True they are problems instead
    warnings: tuple[Problem, ...] = ()
    # how a call came about when it was not the main conversation (call index -> mark)
    marks: Mapping[int, str] = field(default_factory=dict)


def load_input(
    path: Path,
    registry: ToolRegistry,
    *,
    display: str | None = None,
    source_format: str | None = None,
    max_calls_per_turn: int = MAX_CALLS_PER_TURN,
    strict: bool = False,
    select: Select | None = None,
    allow_empty: bool = False,
) -> Imported:
    """Load a plan, transcript or call stream (``source_format``: one of FORMATS, or detect).
    ``select``: the turns of a toolrun plan to build (see ``plan_from_document``); the other
    formats never call it.

    A JSONL call stream is cut into turns of ``max_calls_per_turn`` calls. A session log's
    records that cannot be read are skipped with a warning (problems when ``strict``).
    An input that is no format toolrun reads, or that yields no call, is a problem unless
    ``allow_empty`` (then it is an empty plan, with a warning when unrecognised).
    Raises PlanError listing every located problem.
    """
    from toolrun.plan.loader import plan_from_document

    file = display if display is not None else str(path)
    if source_format is not None and source_format not in FORMATS:
        raise ValueError(f"unknown input format {source_format!r}; expected one of {FORMATS}")
    text = _read(path, file)
    kind = source_format
    if kind is None and _sniff_lines(path, text):
        lines = _JsonLines(text, file)
        # (an empty file is an empty call stream: what it lacks is calls)
        kind = lines.detect() if lines.records() else "jsonl"
        if kind is None:
            return _unrecognised(file, lines.first_line(), "no line is a record of one",
                                 allow_empty)
    if kind in LINE_FORMATS:
        return _load_lines(path, file, text, kind, registry, max_calls_per_turn, strict,
                           allow_empty)
    json_syntax = path.suffix.lower() == ".json"
    if select is not None and kind in (None, "toolrun") and not json_syntax:
        from toolrun.plan.loader import plan_from_region

        # a part of a big YAML plan: only its own turns are parsed (None: no outline)
        plan = plan_from_region(
            text, file, registry, select, max_calls_per_turn=max_calls_per_turn
        )
        if plan is not None:
            return Imported(plan, "toolrun")
    try:
        # a part of a big plan is decoded turn by turn, as it is built (see parse_json)
        lean = select is not None and kind in (None, "toolrun")
        doc = parse_text(text, file, json_syntax=json_syntax, lean=lean)
    except DocumentError as exc:
        raise PlanError([exc.problem]) from None
    if kind is None:
        kind = _detect(doc.data)
    if kind in LINE_FORMATS:  # a single line of one, written as a file
        return _load_lines(path, file, text, kind, registry, max_calls_per_turn, strict,
                           allow_empty)
    if kind == "toolrun":
        plan = plan_from_document(
            doc, registry, max_calls_per_turn=max_calls_per_turn, select=select
        )
        return Imported(plan, "toolrun")
    builder = _Builder(file, registry, foreign_tools=True, per_turn=max_calls_per_turn,
                       strict=strict)
    BY_NAME[kind].load_module().load(doc, builder, path)
    imported = builder.imported(kind)
    return _not_empty(imported, doc.value_location(()), "this document", allow_empty)


def _load_lines(
    path: Path,
    file: str,
    text: str,
    kind: str,
    registry: ToolRegistry,
    per_turn: int,
    strict: bool,
    allow_empty: bool,
) -> Imported:
    lines = _JsonLines(text, file)
    builder = _Builder(
        file, registry, foreign_tools=kind != "jsonl", per_turn=per_turn, strict=strict
    )
    BY_NAME[kind].load_module().load(lines, builder, path)
    imported = builder.imported(kind)
    records = lines.records()
    what = f"its {records} record{'s' if records != 1 else ''}" if records else "an empty file"
    return _not_empty(imported, lines.first_line(), what, allow_empty)


def _not_empty(imported: Imported, first: Location, what: str, allow_empty: bool) -> Imported:
    """``imported``, unless it holds no call (PlanError located at its first record)."""
    if len(imported.plan) or allow_empty:
        return imported
    skipped = len(imported.warnings)
    note = f", {skipped} skipped" if skipped else ""
    message = (
        f"no tool call in {what}{note} (read as {imported.format}): nothing would be "
        f"decided; {ALLOW_EMPTY_HINT}"
    )
    raise PlanError([*imported.warnings, Problem(first, "", message)])


def _unrecognised(file: str, first: Location, why: str, allow_empty: bool) -> Imported:
    """An input that is no format toolrun reads: PlanError, or with ``allow_empty`` an
    empty plan and a warning."""
    message = (
        f"not a format toolrun reads ({why}); --from names one of {', '.join(FORMATS)}"
    )
    if allow_empty:
        return Imported(Plan(file, None, ()), "unknown",
                        warnings=(Problem(first, "", f"skipped: {message}"),))
    raise PlanError([Problem(first, "", f"{message}; {ALLOW_EMPTY_HINT}")])


# -- reading and detecting -------------------------------------------------------------------


def _read(path: Path, file: str) -> str:
    """The file's text, or PlanError saying (as the plan loader does) why it cannot be read."""
    try:
        return read_text(path, file)
    except DocumentError as exc:
        raise PlanError([exc.problem]) from None


def _first_object_lines(text: str, count: int) -> list[dict[str, Any]] | None:
    """The first ``count`` non-blank lines as JSON objects, or None if one is not."""
    found: list[dict[str, Any]] = []
    start = 0
    while len(found) < count and start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end].strip()
        start = end + 1
        if not line:
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):  # the real parse says what is wrong
            return None
        if not isinstance(value, dict):
            return None
        found.append(value)
    return found


def _sniff_lines(path: Path, text: str) -> bool:
    """Whether the file is JSON Lines, by its suffix or content."""
    if path.suffix.lower() in JSONL_SUFFIXES:
        return True
    if path.suffix.lower() in (".yaml", ".yml"):
        return False
    if "\n" not in text.strip():
        return False  # one line (a plan written by a program): one document, not records
    first = _first_object_lines(text, 2)
    return first is not None and len(first) == 2


def _detect(data: Any) -> str:
    """The format of a parsed JSON/YAML document: a toolrun plan when it has ``turns`` or
    ``calls`` or no other format takes it (the plan loader then says what it lacks)."""
    if isinstance(data, dict) and ("turns" in data or "calls" in data):
        return "toolrun"
    found = document_format(data)
    return found.name if found is not None else "toolrun"


# -- building a plan ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Where:
    """How to locate paths of one document: a whole file, or one line of a JSONL file."""

    doc: Document
    line: int | None = None  # the JSONL line number; None for a whole document

    def _shift(self, loc: Location) -> Location:
        return loc if self.line is None else Location(loc.file, self.line, loc.column)

    def value(self, path: Sequence[PathPart]) -> Location:
        return self._shift(self.doc.value_location(path))

    def key(self, path: Sequence[PathPart]) -> Location:
        return self._shift(self.doc.locate(path))

    def validation(
        self, exc: ValidationError, prefix: Sequence[PathPart], model: type[BaseModel]
    ) -> list[Problem]:
        problems = problems_from_validation(exc, self.doc, prefix=prefix, model=model)
        if self.line is None:
            return problems
        return [
            Problem(self._shift(p.location) if p.location else None, p.path, p.message)
            for p in problems
        ]


def __getattr__(name: str) -> Any:
    # a pydantic model, imported with pydantic only when a transcript has such a tool
    if name == "ForeignInput":
        from toolrun.plan.foreign import ForeignInput

        return ForeignInput
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _foreign(tool_input: Mapping[str, Any]) -> ForeignInput:
    from toolrun.plan.foreign import ForeignInput

    return ForeignInput.model_validate(tool_input)


@dataclass
class _Builder:
    """Calls and turns in file order, every problem collected."""

    file: str
    registry: ToolRegistry
    problems: list[Problem] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    seen: dict[str, Location] = field(default_factory=dict)
    index: int = 0
    turn_location: Location | None = None
    # Transcripts name the agent's own tools (TodoWrite, Task, WebSearch, ...): toolrun
    # cannot run those, but rules can still decide them, so they are not invalid input.
    foreign_tools: bool = False
    per_turn: int = MAX_CALLS_PER_TURN
    cwd: str | None = None  # the working directory the current record names
    cwds: dict[int, str] = field(default_factory=dict)
    strict: bool = False
    warnings: list[Problem] = field(default_factory=list)
    mark: str = ""  # how the current record's calls came about ("" for the main thread)
    marks: dict[int, str] = field(default_factory=dict)

    def skipped(self, location: Location, message: str) -> None:
        """A session record that is skipped: a warning, or a problem when strict."""
        if self.strict:
            self.problems.append(Problem(location, "", message + " (--strict)"))
        else:
            self.warnings.append(Problem(location, "", f"skipped: {message}"))

    def imported(self, kind: str) -> Imported:
        return Imported(
            self.plan(None), kind, self.cwds, tuple(self.warnings), self.marks
        )

    def problem(
        self,
        where: _Where,
        path: Sequence[PathPart],
        message: str,
        *,
        at: Sequence[PathPart] | None = None,
    ) -> None:
        """A problem with the value at ``path`` (located at ``at``, e.g. the parent of a
        missing key)."""
        self.problems.append(
            Problem(where.value(path if at is None else at), format_path(path), message)
        )

    def missing(self, where: _Where, parent: Sequence[PathPart], key: str) -> None:
        self.problem(where, (*parent, key), f"missing required key {key!r}", at=parent)

    def end_turn(self) -> None:
        if len(self.calls) > self.per_turn:
            over = self.calls[self.per_turn]
            self.problems.append(
                Problem(over.location, "", turn_limit_message(len(self.calls), self.per_turn))
            )
        if self.turn_location is not None and self.calls:
            self.turns.append(Turn(len(self.turns), tuple(self.calls), self.turn_location))
        self.calls = []
        self.turn_location = None

    def call(
        self,
        where: _Where,
        path: Sequence[PathPart],
        *,
        tool: str,
        tool_path: Sequence[PathPart],
        tool_input: dict[str, Any],
        input_path: Sequence[PathPart],
        call_id: str | None,
        id_path: Sequence[PathPart] | None = None,
        timeout: float | None = None,
    ) -> None:
        """One call at ``path``: its tool must exist and its input must fit the tool."""
        index = self.index
        self.index += 1
        location = where.value(path)
        name = call_id if call_id else f"call-{index + 1}"
        if name in self.seen and self.mark.startswith("subagent ") and call_id:
            # Older Claude Code versions also kept a subagent's records in the main log
            self.index -= 1
            self.skipped(location, f"call {name!r} was read already at {self.seen[name]}")
            return
        if name in self.seen:
            at = where.key(id_path) if call_id and id_path is not None else location
            shown = format_path(id_path) if call_id and id_path is not None else format_path(path)
            self.problems.append(
                Problem(at, shown, f"duplicate id {name!r} (first used at {self.seen[name]})")
            )
        else:
            self.seen[name] = location
        if where.doc.nul_possible:
            nul = list(nul_paths(tool_input, tuple(input_path)))
            for nul_path in nul:
                self.problem(where, nul_path, NUL_MESSAGE)
            if nul:
                return
        found = self.registry.get(tool)
        if found is None and self.foreign_tools:
            self.add(
                Call(
                    index,
                    len(self.turns),
                    name,
                    tool,
                    dict(tool_input),
                    _foreign(tool_input),
                    timeout,
                    location,
                )
            )
            return
        if found is None:
            hint = self.registry.suggest(tool)
            self.problems.append(
                Problem(
                    where.key(tool_path),
                    format_path(tool_path),
                    f"unknown tool {tool!r}" + (f" (did you mean {hint!r}?)" if hint else ""),
                )
            )
            return
        try:
            params: Any = validate_input(found, tool_input)
        except Invalid as exc:
            problems = where.validation(exc.error, input_path, found.input_model)
            if not self.foreign_tools:
                self.problems.extend(problems)
                return
            # a recorded call: its agent's tool refused it as toolrun's would, and went on
            params = InvalidInput(invalid_input_message(tool, problems, input_path))
        self.add(
            Call(index, len(self.turns), name, tool, dict(tool_input), params, timeout, location)
        )

    def add(self, call: Call) -> None:
        if self.cwd is not None:
            self.cwds[call.index] = self.cwd
        if self.mark:
            self.marks[call.index] = self.mark
        if self.turn_location is None:
            self.turn_location = call.location
        self.calls.append(call)

    def plan(self, name: str | None) -> Plan:
        self.end_turn()
        if self.problems:
            raise PlanError(self.problems)
        return Plan(self.file, name, tuple(self.turns))


def invalid_input_message(
    tool: str, problems: Sequence[Problem], input_path: Sequence[PathPart]
) -> str:
    """``invalid input for TOOL: KEY: MESSAGE; ...`` (keys relative to the input)."""
    prefix = format_path(input_path)
    parts = []
    for p in problems:
        key = p.path.removeprefix(prefix).lstrip(".") if prefix else p.path
        parts.append(f"{key}: {p.message}" if key else p.message)
    return f"invalid input for {tool}: " + "; ".join(parts)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


def decode_arguments(
    where: _Where, builder: _Builder, arguments: Any, args_path: tuple[PathPart, ...]
) -> dict[str, Any] | None:
    """A function call's arguments: a JSON string (or an object some exporters store) that
    must encode an object; None after noting the problem."""
    if isinstance(arguments, dict):  # some exporters store them decoded
        tool_input: Any = arguments
    elif isinstance(arguments, str):
        try:
            # parsed as a JSON file is, with its limits (depth, surrogates)
            tool_input = parse_json(arguments, "").data if arguments.strip() else {}
        except DocumentError as exc:
            loc = exc.problem.location
            message = exc.problem.message.removeprefix("invalid JSON: ")
            if loc is not None:
                before = arguments.split("\n")[: loc.line - 1]
                message += f" (at character {sum(map(len, before)) + len(before) + loc.column}"
                message += " of the string)"
            builder.problem(where, args_path, f"not valid JSON: {message}")
            return None
    else:
        builder.problem(where, args_path, f"must be a JSON string, not {_kind(arguments)}")
        return None
    if not isinstance(tool_input, dict):
        builder.problem(where, args_path, f"must encode a JSON object, not {_kind(tool_input)}")
        return None
    return tool_input


# -- JSON Lines -----------------------------------------------------------------------------


class _JsonLines:
    """A JSONL file: one JSON value a line, each parsed with its positions."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.problems: list[Problem] = []

    def __iter__(self) -> Any:
        for number, raw in enumerate(self.text.split("\n"), start=1):
            line = raw.rstrip("\r")
            if not line.strip():
                continue
            try:
                doc = parse_json(line, self.file)
            except DocumentError as exc:
                loc = exc.problem.location
                column = loc.column if loc is not None else 1
                yield (
                    None,
                    Problem(Location(self.file, number, column), "", exc.problem.message),
                    number,
                )
                continue
            yield doc, None, number

    def last_line(self) -> int:
        """The number of the last line that is not blank."""
        lines = self.text.split("\n")
        for number in range(len(lines), 0, -1):
            if lines[number - 1].strip():
                return number
        return 0

    def detect(self) -> str | None:
        """The line format of the first record one knows (see :mod:`toolrun.plan.formats`),
        or None when none knows any of them."""
        for line in self.text.split("\n"):
            try:
                value = json.loads(line) if line.strip() else None
            except (ValueError, RecursionError):
                continue
            found = record_format(value) if isinstance(value, dict) else None
            if found is not None:
                return found.name
        return None

    def first_line(self) -> Location:
        """Where the first record is (line 1 of an empty file)."""
        for number, raw in enumerate(self.text.split("\n"), start=1):
            if raw.strip():
                return Location(self.file, number, len(raw) - len(raw.lstrip()) + 1)
        return Location(self.file, 1, 1)

    def records(self) -> int:
        """The number of lines that are not blank."""
        return sum(1 for raw in self.text.split("\n") if raw.strip())


def _line_object(
    builder: _Builder,
    doc: Document | None,
    problem: Problem | None,
    number: int,
    last: int | None = None,
) -> Any:
    """The line's object; with ``last`` (the last line's number) a session log's line that
    is not one is skipped (a crash can tear the last line of an append-only log)."""
    if problem is not None:
        if last is None:
            builder.problems.append(problem)
        elif problem.location is not None:
            torn = " (a torn last line)" if number == last else ""
            builder.skipped(problem.location, f"{problem.message}{torn}")
        return None
    assert doc is not None
    if not isinstance(doc.data, dict):
        message = f"each line must be a JSON object, not {_kind(doc.data)}"
        if last is None:
            builder.problems.append(Problem(Location(builder.file, number, 1), "", message))
        else:
            builder.skipped(Location(builder.file, number, 1), message)
        return None
    return doc.data
