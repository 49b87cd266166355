"""Plans from what agents leave behind: transcripts and call streams (design §2).

Beside toolrun's own plans (YAML or JSON), ``toolrun check`` reads:

- ``anthropic``: a Messages API conversation, a list of messages or ``{"messages": [...]}``;
  the ``tool_use`` content blocks ``{id, name, input}`` of each assistant message form a turn.
- ``openai``: a Chat Completions conversation; the ``tool_calls`` of each assistant message
  form a turn, ``function.arguments`` being a JSON string.
- ``claude-code``: a Claude Code session transcript, JSONL with one event a line; the
  ``tool_use`` blocks of assistant events sharing one ``message.id`` form a turn.
- ``jsonl``: a stream of ``{"tool", "input", "id"?, "timeout"?}`` objects, one a line,
  read as ``toolrun exec -`` reads a file piped to it: consecutive lines form turns of up
  to the turn's call limit.

Every call keeps its file, line and column; every problem is located and all of them are
reported at once (:class:`PlanError`), with the same messages as a plan's (unknown tool,
bad input for the tool, duplicate id).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from toolrun.errors import Location, PlanError, Problem
from toolrun.plan.models import MAX_CALLS_PER_TURN, Call, Plan, Turn, turn_limit_message
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

FORMATS: Final = ("toolrun", "anthropic", "openai", "claude-code", "codex", "gemini", "jsonl")
_LINE_FORMATS: Final = ("jsonl", "claude-code", "codex")
JSONL_SUFFIXES: Final = (".jsonl", ".ndjson")
# Roles that only OpenAI's Chat Completions uses (Anthropic's system prompt is a parameter).
_OPENAI_ROLES: Final = frozenset({"system", "developer", "tool", "function"})
_ANTHROPIC_BLOCKS: Final = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})


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
) -> Imported:
    """Load a plan, transcript or call stream (``source_format``: one of FORMATS, or detect).
    ``select``: the turns of a toolrun plan to build (see ``plan_from_document``); the other
    formats never call it.

    A JSONL call stream is cut into turns of ``max_calls_per_turn`` calls. A session log's
    records that cannot be read are skipped with a warning (problems when ``strict``).
    Raises PlanError listing every located problem.
    """
    from toolrun.plan.loader import plan_from_document

    file = display if display is not None else str(path)
    if source_format is not None and source_format not in FORMATS:
        raise ValueError(f"unknown input format {source_format!r}; expected one of {FORMATS}")
    text = _read(path, file)
    kind = source_format
    if kind is None:
        kind = _sniff_lines(path, text)
    if kind in _LINE_FORMATS:
        lines = _JsonLines(text, file)
        if source_format is None:
            kind = lines.detect()
        builder = _Builder(
            file,
            registry,
            foreign_tools=kind != "jsonl",
            per_turn=max_calls_per_turn,
            strict=strict,
        )
        if kind == "claude-code":
            _claude_code(lines, builder)
            for log, shown in _subagent_logs(path, file):
                _subagent(log, shown, builder)
        elif kind == "codex":
            from toolrun.plan.codex import rollout

            rollout(lines, builder)
        else:
            _call_stream(lines.text, builder, max_calls_per_turn)
        return builder.imported(kind)
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
    if kind in _LINE_FORMATS:  # a single line of one, written as a file
        return load_input(
            path,
            registry,
            display=display,
            source_format=kind,
            max_calls_per_turn=max_calls_per_turn,
            strict=strict,
        )
    if kind == "toolrun":
        plan = plan_from_document(
            doc, registry, max_calls_per_turn=max_calls_per_turn, select=select
        )
        return Imported(plan, "toolrun")
    builder = _Builder(file, registry, foreign_tools=True, per_turn=max_calls_per_turn)
    if kind == "gemini":
        from toolrun.plan.gemini import session

        session(doc, builder)
        return builder.imported(kind)
    if kind == "anthropic":
        _anthropic(doc, builder)
    else:
        _openai(doc, builder)
    return Imported(builder.plan(None), kind)


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


def _sniff_lines(path: Path, text: str) -> str | None:
    """``jsonl`` (refined later) when the file is JSON Lines, by its suffix or content."""
    if path.suffix.lower() in JSONL_SUFFIXES:
        return "jsonl"  # refined by _JsonLines.detect
    if path.suffix.lower() in (".yaml", ".yml"):
        return None
    if "\n" not in text.strip():
        return None  # one line (a plan written by a program): one document, not records
    first = _first_object_lines(text, 2)
    if first is not None and len(first) == 2:
        return "jsonl"
    return None


def _event_kind(obj: Mapping[str, Any]) -> str | None:
    """``jsonl`` for a call (it names its tool), ``codex`` for a rollout record,
    ``claude-code`` for a session event."""
    if "tool" in obj:
        return "jsonl"
    from toolrun.plan.codex import is_rollout_line

    if is_rollout_line(obj):
        return "codex"
    if isinstance(obj.get("type"), str):
        return "claude-code"
    return None


def _detect(data: Any) -> str:
    """The format of a parsed JSON/YAML document (toolrun when nothing else fits)."""
    if isinstance(data, dict):
        if "turns" in data or "calls" in data:
            return "toolrun"
        kind = _event_kind(data)
        if kind is not None:
            return kind
        from toolrun.plan.gemini import is_session

        if is_session(data):
            return "gemini"
        messages = data.get("messages")
    else:
        messages = data
    if not isinstance(messages, list):
        return "toolrun"
    anthropic = False
    for message in messages:
        if not isinstance(message, dict):
            continue
        if "tool_calls" in message or "function_call" in message:
            return "openai"
        if message.get("role") in _OPENAI_ROLES:
            return "openai"
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in _ANTHROPIC_BLOCKS for b in content
        ):
            anthropic = True
    if (
        anthropic
        or isinstance(data, list)
        or any(isinstance(m, dict) and "role" in m for m in messages)
    ):
        return "anthropic"  # a list is a conversation; without tool calls either shape fits
    return "toolrun"


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
            params = validate_input(found, tool_input)
        except Invalid as exc:
            self.problems.extend(where.validation(exc.error, input_path, found.input_model))
            return
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


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


def _messages(
    doc: Document, builder: _Builder, what: str
) -> tuple[list[Any], tuple[PathPart, ...]]:
    """The message list of a conversation and its path: the document, or its ``messages``."""
    data = doc.data
    where = _Where(doc)
    if isinstance(data, list):
        return data, ()
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return data["messages"], ("messages",)
    if isinstance(data, dict) and "messages" in data:
        builder.problem(
            where, ("messages",), f"must be a list of messages, not {_kind(data['messages'])}"
        )
    else:
        builder.problem(
            where, (), f'an {what} conversation is a list of messages or {{"messages": [...]}}'
        )
    return [], ()


def _role(where: _Where, builder: _Builder, message: Any, path: tuple[PathPart, ...]) -> str | None:
    if not isinstance(message, dict):
        builder.problem(where, path, f"a message must be an object, not {_kind(message)}")
        return None
    role = message.get("role")
    if not isinstance(role, str):
        if role is None:
            builder.missing(where, path, "role")
        else:
            builder.problem(where, (*path, "role"), f"must be a string, not {_kind(role)}")
        return None
    return role


def _tool_use_blocks(
    where: _Where,
    builder: _Builder,
    content: Any,
    path: tuple[PathPart, ...],
    turn_start: Callable[[], None] | None = None,
) -> None:
    """The ``tool_use`` blocks of an assistant message's content, as calls."""
    if isinstance(content, str) or content is None:
        return
    if not isinstance(content, list):
        builder.problem(
            where, path, f"must be a string or a list of content blocks, not {_kind(content)}"
        )
        return
    for j, block in enumerate(content):
        block_path = (*path, j)
        if not isinstance(block, dict):
            builder.problem(
                where, block_path, f"a content block must be an object, not {_kind(block)}"
            )
            continue
        if block.get("type") != "tool_use":
            continue
        if turn_start is not None:
            turn_start()
            turn_start = None
        bad = False
        for key, kind in (("id", str), ("name", str), ("input", dict)):
            if key not in block:
                builder.missing(where, block_path, key)
                bad = True
            elif not isinstance(block[key], kind):
                expected = "an object" if kind is dict else "a string"
                builder.problem(
                    where, (*block_path, key), f"must be {expected}, not {_kind(block[key])}"
                )
                bad = True
        if bad:
            continue
        builder.call(
            where,
            block_path,
            tool=block["name"],
            tool_path=(*block_path, "name"),
            tool_input=block["input"],
            input_path=(*block_path, "input"),
            call_id=block["id"] or None,
            id_path=(*block_path, "id"),
        )


def _anthropic(doc: Document, builder: _Builder) -> None:
    messages, prefix = _messages(doc, builder, "Anthropic Messages API")
    where = _Where(doc)
    for i, message in enumerate(messages):
        path = (*prefix, i)
        if _role(where, builder, message, path) != "assistant":
            continue
        builder.end_turn()
        _tool_use_blocks(where, builder, message.get("content"), (*path, "content"))
        builder.end_turn()


def _openai(doc: Document, builder: _Builder) -> None:
    messages, prefix = _messages(doc, builder, "OpenAI Chat Completions")
    where = _Where(doc)
    for i, message in enumerate(messages):
        path = (*prefix, i)
        if _role(where, builder, message, path) != "assistant":
            continue
        builder.end_turn()
        calls = message.get("tool_calls")
        if calls is None and isinstance(message.get("function_call"), dict):
            # the deprecated single function call: no id
            _openai_function(
                where, builder, message["function_call"], (*path, "function_call"), None
            )
        elif calls is not None and not isinstance(calls, list):
            builder.problem(where, (*path, "tool_calls"), f"must be a list, not {_kind(calls)}")
        for k, tool_call in enumerate(calls or ()):
            call_path = (*path, "tool_calls", k)
            if not isinstance(tool_call, dict):
                builder.problem(
                    where, call_path, f"a tool call must be an object, not {_kind(tool_call)}"
                )
                continue
            kind = tool_call.get("type", "function")
            function = tool_call.get("function")
            if kind != "function":
                builder.problem(
                    where,
                    (*call_path, "type"),
                    f"unsupported tool call type {kind!r} (only 'function' calls name a tool)",
                )
                continue
            if not isinstance(function, dict):
                if function is None:
                    builder.missing(where, call_path, "function")
                else:
                    builder.problem(
                        where, (*call_path, "function"), f"must be an object, not {_kind(function)}"
                    )
                continue
            call_id = tool_call.get("id")
            if call_id is not None and not isinstance(call_id, str):
                builder.problem(
                    where, (*call_path, "id"), f"must be a string, not {_kind(call_id)}"
                )
                continue
            _openai_function(where, builder, function, (*call_path, "function"), call_id, call_path)
        builder.end_turn()


def _openai_function(
    where: _Where,
    builder: _Builder,
    function: dict[str, Any],
    path: tuple[PathPart, ...],
    call_id: str | None,
    call_path: tuple[PathPart, ...] | None = None,
) -> None:
    call_path = call_path or path
    name = function.get("name")
    arguments = function.get("arguments", "{}")
    if name is None:
        builder.missing(where, path, "name")
        return
    if not isinstance(name, str):
        builder.problem(where, (*path, "name"), f"must be a string, not {_kind(name)}")
        return
    args_path = (*path, "arguments")
    tool_input = decode_arguments(where, builder, arguments, args_path)
    if tool_input is None:
        return
    builder.call(
        where,
        call_path,
        tool=name,
        tool_path=(*path, "name"),
        tool_input=tool_input,
        input_path=args_path,
        call_id=call_id or None,
        id_path=(*call_path, "id"),
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

    def detect(self) -> str:
        """``claude-code``, ``codex`` or ``jsonl``, from the first line that tells."""
        for line in self.text.split("\n"):
            try:
                value = json.loads(line) if line.strip() else None
            except (ValueError, RecursionError):
                continue
            kind = _event_kind(value) if isinstance(value, dict) else None
            if kind is not None:
                return kind
        return "jsonl"


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


def _call_stream(text: str, builder: _Builder, per_turn: int) -> None:
    """``{"tool", "input", "id"?, "timeout"?}`` a line, read as ``exec -`` reads a file piped
    to it: consecutive lines form turns of up to ``per_turn`` calls."""
    from toolrun.plan.loader import call_from_json_line

    in_turn = 0
    for number, raw in enumerate(text.split("\n"), start=1):
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


#: Claude Code session record types that carry no tool call (skipped without a warning).
CLAUDE_CODE_RECORDS: Final = frozenset(
    {
        "user", "system", "summary", "file-history-snapshot", "queue-operation", "progress",
        "attachment", "custom-title", "tag", "agent-name", "last-prompt", "permission-mode",
    }
)


def _subagent_logs(path: Path, file: str) -> list[tuple[Path, str]]:
    """The logs Claude Code keeps beside a session for its subagents
    (``<session>.jsonl`` -> ``<session>/subagents/*.jsonl``), with their shown names."""
    if path.suffix != ".jsonl":
        return []
    folder = path.with_suffix("") / "subagents"
    try:
        logs = sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file())
    except OSError:
        return []
    base = file.removesuffix(".jsonl")
    return [(log, f"{base}/subagents/{log.name}") for log in logs]


def _subagent(log: Path, shown: str, builder: _Builder) -> None:
    """A subagent's log: its calls are turns of their own, marked with the log's name."""
    try:
        text = read_text(log, shown)
    except DocumentError as exc:
        builder.skipped(exc.problem.location or Location(shown, 1, 1), exc.problem.message)
        return
    main_file = builder.file
    builder.end_turn()
    builder.file = shown
    try:
        _claude_code(_JsonLines(text, shown), builder, f"subagent {shown}")
        builder.end_turn()
    finally:
        builder.file = main_file
        builder.mark = ""


def _claude_code(lines: _JsonLines, builder: _Builder, mark: str = "") -> None:
    """Assistant events' ``tool_use`` blocks; one ``message.id`` is one turn; sidechain
    records (a subagent's, ``isSidechain``) are turns of their own, marked."""
    current: object = None
    last = lines.last_line()
    for doc, problem, number in lines:
        data = _line_object(builder, doc, problem, number, last)
        if data is None:
            continue
        assert doc is not None
        kind = data.get("type")
        if kind != "assistant":
            if kind not in CLAUDE_CODE_RECORDS:
                shown = repr(kind) if isinstance(kind, str) else f"({_kind(kind)})"
                what = "no record type" if kind is None else f"unknown record type {shown}"
                builder.skipped(_Where(doc, number).value(("type",) if kind is not None else ()),
                                what)
            continue
        builder.mark = mark or ("sidechain" if data.get("isSidechain") is True else "")
        where = _Where(doc, number)
        message = data.get("message")
        if message is None:
            builder.missing(where, (), "message")
            continue
        if not isinstance(message, dict):
            builder.problem(where, ("message",), f"must be an object, not {_kind(message)}")
            continue
        cwd = data.get("cwd")
        builder.cwd = cwd if isinstance(cwd, str) and cwd else None
        message_id = message.get("id")
        key: object = (
            (builder.mark, message_id) if isinstance(message_id, str) and message_id else object()
        )

        def new_turn(key: object = key) -> None:
            nonlocal current
            if key != current:
                builder.end_turn()
                current = key

        _tool_use_blocks(where, builder, message.get("content"), ("message", "content"), new_turn)
