"""Loading plans: YAML or JSON in, a frozen Plan out, or every problem at once.

A plain plan is taken without pydantic (its import was a quarter of a one-call run):
the header, each turn and each call have a fast path that takes only what the
schema's models (:mod:`toolrun.plan.schema`) would take unchanged, and anything else
goes to those models, for the same result or the same messages.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from toolrun.dataclass_init import slots_builder
from toolrun.errors import Location, PlanError, Problem
from toolrun.plan.models import MAX_CALLS_PER_TURN, Call, Plan, Turn, turn_limit_message
from toolrun.tools.inputs import Params, validate_input
from toolrun.tools.registry import ToolRegistry
from toolrun.validation import Invalid, problems_from_validation, validate
from toolrun.yamlfile import (
    NUL_MESSAGE,
    Document,
    DocumentError,
    PathPart,
    format_path,
    load_document,
    nul_paths,
    outline_turns,
    parse_json,
    parse_text,
)

if TYPE_CHECKING:
    from toolrun.plan.schema import CallSpec
    from toolrun.tools.inputs import InputSpec


def load_plan(
    path: Path,
    registry: ToolRegistry,
    *,
    display: str | None = None,
    max_calls_per_turn: int = MAX_CALLS_PER_TURN,
) -> Plan:
    """Load and validate one plan file; raise PlanError listing every problem."""
    try:
        doc = load_document(path, display=display)
    except DocumentError as exc:
        raise PlanError([exc.problem]) from None
    return plan_from_document(doc, registry, max_calls_per_turn=max_calls_per_turn)


def load_plans(
    paths: Iterable[Path],
    registry: ToolRegistry,
    *,
    display: Callable[[Path], str] = str,
    max_calls_per_turn: int = MAX_CALLS_PER_TURN,
) -> list[Plan]:
    """Load several plans; problems from all of them are reported together."""
    plans: list[Plan] = []
    problems: list[Problem] = []
    for path in paths:
        try:
            plans.append(
                load_plan(
                    path, registry, display=display(path), max_calls_per_turn=max_calls_per_turn
                )
            )
        except PlanError as exc:
            problems.extend(exc.problems)
    if problems:
        raise PlanError(problems)
    return plans


#: Which turns to build, given each turn's number of calls: (those turns' indexes, whether
#: the calls of the others are still validated). A process deciding a part of a big plan
#: builds only its own turns (their calls and validated inputs are most of its memory).
Select = Callable[[Sequence[int]], tuple[range, bool]]


def plan_from_document(
    doc: Document,
    registry: ToolRegistry,
    *,
    max_calls_per_turn: int = MAX_CALLS_PER_TURN,
    select: Select | None = None,
    first: tuple[int, int] = (0, 0),
) -> Plan:
    """The plan of ``doc``, or PlanError listing every problem. With ``select``, the turns
    it leaves out are there without their calls, which are validated only if it says so
    (a process that reports the plan's problems does; the others need not). ``first``:
    the number of the document's first turn and first call (a region of a plan)."""
    problems: list[Problem] = list(doc.problems)
    data = doc.data
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise PlanError(
            [
                *problems,
                Problem(doc.value_location(()), "", f"a plan must be a mapping, not {kind}"),
            ]
        )
    header = _plain_header(data)
    if header is None:
        from toolrun.plan.schema import PlanFile, PlanHeader

        try:
            header = _Header.of(validate(PlanHeader, data))
        except Invalid as exc:
            problems.extend(problems_from_validation(exc.error, doc, model=PlanFile))
            header = _Header(
                None,
                data.get("turns") if isinstance(data.get("turns"), list) else None,
                data.get("calls") if isinstance(data.get("calls"), list) else None,
            )
    if header.turns is not None and header.calls is not None:
        problems.append(
            Problem(doc.locate(("calls",)), "calls", "use either 'turns' or 'calls', not both")
        )
    elif "turns" not in data and "calls" not in data:
        problems.append(Problem(doc.value_location(()), "", "a plan needs 'turns' or 'calls'"))

    batches: list[tuple[list[PathPart], list[Any]]] = []
    if header.turns is not None:
        for t, raw_turn in enumerate(header.turns):
            turn_calls = _plain_turn(raw_turn)
            if turn_calls is None:
                from toolrun.plan.schema import TurnHeader, TurnSpec

                try:
                    turn_calls = validate(TurnHeader, raw_turn).calls
                except Invalid as exc:
                    problems.extend(
                        problems_from_validation(
                            exc.error, doc, prefix=("turns", t), model=TurnSpec
                        )
                    )
                    continue
            batches.append((["turns", t, "calls"], turn_calls))
    elif header.calls is not None:
        batches.append((["calls"], header.calls))

    turns: list[Turn] = []
    builder = _Calls(doc, registry, problems)
    first_turn, index = first
    kept, check_rest = range(len(batches)), True
    if select is not None:
        kept, check_rest = select([len(raw) for _, raw in batches])
    for t, (prefix, raw_calls) in enumerate(batches):
        if t not in kept and not check_rest:
            index += len(raw_calls)
            turns.append(Turn(t + first_turn, (), doc.value_location(prefix[:-1] or prefix)))
            continue
        if len(raw_calls) > max_calls_per_turn:
            over = [*prefix, max_calls_per_turn]
            problems.append(
                Problem(
                    doc.value_location(over),
                    format_path(over),
                    turn_limit_message(len(raw_calls), max_calls_per_turn),
                )
            )
        if doc.lean:  # the turn's calls were left in the text: decoded now, let go after
            raw_calls = doc.calls_of(int(prefix[1]))
        calls = builder.turn(prefix, raw_calls, index, t + first_turn, keep=t in kept)
        index += len(raw_calls)
        turns.append(
            Turn(t + first_turn, tuple(calls), doc.value_location(prefix[:-1] or prefix))
        )
    if problems:
        raise PlanError(problems)
    return Plan(doc.file, header.name, tuple(turns))


class _Header(NamedTuple):
    """What the loader uses of a plan's header (PlanHeader's fields)."""

    name: str | None
    turns: list[Any] | None
    calls: list[Any] | None

    @classmethod
    def of(cls, header: Any) -> _Header:
        return cls(header.name, header.turns, header.calls)


#: PlanHeader's and CallSpec's keys (a test pins them to the models)
_HEADER_KEYS = frozenset({"version", "name", "description", "turns", "calls"})
_CALL_KEYS = frozenset({"id", "tool", "input", "timeout"})


def _plain_header(data: dict[Any, Any]) -> _Header | None:
    """A header PlanHeader would take as it is, or None (then PlanHeader decides)."""
    if not _HEADER_KEYS.issuperset(data):
        return None
    version = data.get("version")
    if version is not None and (type(version) is not int or version != 1):
        return None
    if any(data.get(k) is not None and type(data[k]) is not str for k in ("name", "description")):
        return None
    turns, calls = data.get("turns"), data.get("calls")
    if any(v is not None and type(v) is not list for v in (turns, calls)):
        return None
    return _Header(data.get("name"), turns, calls)


def _plain_turn(raw: object) -> list[Any] | None:
    """The calls of a turn TurnHeader would take as it is, or None."""
    if type(raw) is not dict or len(raw) != 1:
        return None
    calls = raw.get("calls")
    return calls if type(calls) is list else None


def _call_spec(raw: object) -> CallSpec:
    from toolrun.plan.schema import CallSpec

    return validate(CallSpec, raw)


def _call_problems(exc: Invalid, doc: Document, path: Sequence[PathPart]) -> list[Problem]:
    from toolrun.plan.schema import CallSpec

    return problems_from_validation(exc.error, doc, prefix=path, model=CallSpec)


class _Spec(NamedTuple):
    """A call's fields as CallSpec holds them, without building a model (a tuple is
    several times cheaper than ``model_construct``, and big plans are mostly such calls)."""

    id: str | None
    tool: str
    input: dict[str, Any]
    timeout: float | None


def _plain_call(raw: object) -> _Spec | None:
    """A call that is obviously valid, taken without pydantic's validator; anything
    unusual returns None and gets the full validation (and its messages)."""
    if type(raw) is not dict or not _CALL_KEYS.issuperset(raw):
        return None
    call_id = raw.get("id")
    tool = raw.get("tool")
    tool_input = raw.get("input", {})
    timeout = raw.get("timeout")
    if type(tool) is not str or type(tool_input) is not dict:
        return None
    if call_id is not None and (type(call_id) is not str or not call_id):
        return None
    if timeout is not None and (type(timeout) not in (int, float) or not 0 < timeout <= _LONGEST):
        return None
    return _Spec(call_id, tool, tool_input, float(timeout) if timeout is not None else None)


#: the longest timeout a call's fast path takes (a longer int overflows a float, inf and
#: nan are no bound): anything else is the schema's to refuse, at its place
_LONGEST = sys.float_info.max

#: Call(...) made the cheap way (a third of its cost; one per call of a plan)
_new_call = slots_builder(Call)


class _Calls:
    """The calls of a plan's turns, each validated and located, with their problems."""

    def __init__(self, doc: Document, registry: ToolRegistry, problems: list[Problem]) -> None:
        self.doc = doc
        self.registry = registry
        self.problems = problems
        self.seen_ids: dict[str, Location] = {}
        # each tool name's compiled input validator (InputSpec.fast), None for a tool
        # without one or an unknown name (those calls take the full path)
        self.validators: dict[str, Callable[[object], Params | None] | None] = {}

    def validator(self, name: str) -> Callable[[object], Params | None] | None:
        tool = self.registry.get(name)
        spec: InputSpec | None = getattr(tool, "input_spec", None)
        found = self.validators[name] = spec.compiled() if spec is not None else None
        return found

    def turn(
        self, prefix: list[PathPart], raw_calls: list[Any], index: int, turn: int, *, keep: bool
    ) -> list[Call]:
        """The calls of one turn (at ``prefix``) numbered from ``index``, or none when it
        is not kept (they are still validated); their problems go to ``problems``.

        A call the schema and its tool's spec take as they are is built here at once:
        what ``_plain_call`` and ``_build_call`` would do to it, inline (their calls and
        lists per call were a third of loading a big plan). Anything else (a problem, a
        duplicate id, an unknown tool, a possible NUL, an input only pydantic can judge)
        goes to them, as every call did."""
        doc, seen_ids, validators = self.doc, self.seen_ids, self.validators
        calls: list[Call] = []
        places = doc.item_locations(prefix)
        if places is not None and len(places) != len(raw_calls):  # pragma: no cover
            places = None
        quick = places is not None and not doc.nul_possible
        for c, raw in enumerate(raw_calls):
            if quick and type(raw) is dict and _CALL_KEYS.issuperset(raw):
                tool, tool_input = raw.get("tool"), raw.get("input")
                call_id, timeout = raw.get("id"), raw.get("timeout")
                if (
                    type(tool) is str
                    and type(tool_input) is dict
                    and (call_id is None or (type(call_id) is str and call_id))
                    and (timeout is None
                         or (type(timeout) in (int, float) and 0 < timeout <= _LONGEST))
                ):
                    if call_id is None:
                        call_id = f"call-{index + 1}"
                    fast = validators[tool] if tool in validators else self.validator(tool)
                    params = fast(tool_input) if fast is not None else None
                    if params is not None and call_id not in seen_ids:
                        location = places[c]  # type: ignore[index]
                        seen_ids[call_id] = location
                        if timeout is not None:
                            timeout = float(timeout)
                        if keep:
                            calls.append(_new_call(
                                index, turn, call_id, tool, tool_input, params, timeout, location
                            ))  # fmt: skip
                        index += 1
                        continue
            path: list[PathPart] = [*prefix, c]
            try:
                call_spec = _plain_call(raw) or _call_spec(raw)
            except Invalid as exc:
                self.problems.extend(_call_problems(exc, doc, path))
            else:
                call = _build_call(
                    doc, self.registry, call_spec, path, index, turn, seen_ids, self.problems,
                    places[c] if places is not None else None,
                )
                if call is not None and keep:
                    calls.append(call)
            index += 1
        return calls


def _build_call(
    doc: Document,
    registry: ToolRegistry,
    spec: CallSpec | _Spec,
    path: list[PathPart],
    index: int,
    turn: int,
    seen_ids: dict[str, Location],
    problems: list[Problem],
    location: Location | None = None,  # where the call is, when the caller knows
) -> Call | None:
    if location is None:
        location = doc.value_location(path)
    call_id = spec.id if spec.id is not None else f"call-{index + 1}"
    if call_id in seen_ids:
        where = doc.locate([*path, "id"]) if spec.id is not None else location
        problems.append(
            Problem(
                where,
                format_path([*path, "id"]),
                f"duplicate id {call_id!r} (first used at {seen_ids[call_id]})",
            )
        )
    else:
        seen_ids[call_id] = location

    tool = registry.get(spec.tool)
    if tool is None:
        hint = registry.suggest(spec.tool)
        problems.append(
            Problem(
                doc.locate([*path, "tool"]),
                format_path([*path, "tool"]),
                f"unknown tool {spec.tool!r}" + (f" (did you mean {hint!r}?)" if hint else ""),
            )
        )
        return None
    if doc.nul_possible:
        found = [
            Problem(doc.value_location(p), format_path(p), NUL_MESSAGE)
            for p in nul_paths(spec.input, (*path, "input"))
        ]
        if found:
            problems.extend(found)
            return None
    try:
        params = validate_input(tool, spec.input)
    except Invalid as exc:
        problems.extend(
            problems_from_validation(
                exc.error, doc, prefix=[*path, "input"], model=tool.input_model
            )
        )
        return None
    # the parsed dict itself (pydantic's copy, or the document's own): nothing changes a
    # call's input, and a copy of every input was a tenth of a big plan's memory
    return Call(index, turn, call_id, spec.tool, spec.input, params, spec.timeout, location)


def call_from_json_line(
    text: str,
    *,
    file: str,
    line: int,
    index: int,
    turn: int,
    registry: ToolRegistry,
    seen_ids: dict[str, Location],
) -> Call:
    """One ``{"tool", "input", "id"?, "timeout"?}`` line of a JSONL call stream, validated
    like a call of a plan; PlanError (located at ``file:line``) when it is not valid."""

    def shift(problem: Problem) -> Problem:
        loc = problem.location
        if loc is None:
            return problem
        return replace(problem, location=Location(file, loc.line + line - 1, loc.column))

    try:
        doc = parse_json(text, file)
    except DocumentError as exc:
        raise PlanError([shift(exc.problem)]) from None
    try:
        spec = _plain_call(doc.data) or _call_spec(doc.data)
    except Invalid as exc:
        raise PlanError([shift(p) for p in _call_problems(exc, doc, [])]) from None
    problems: list[Problem] = []
    call_id = spec.id if spec.id is not None else f"call-{index + 1}"
    first = call_id not in seen_ids
    call = _build_call(doc, registry, spec, [], index, turn, seen_ids, problems)
    if first:  # where a later duplicate says this id was first used: this line
        loc = seen_ids[call_id]
        seen_ids[call_id] = Location(file, loc.line + line - 1, loc.column)
    if problems or call is None:
        raise PlanError([shift(p) for p in problems])
    loc = call.location
    return replace(call, location=Location(file, loc.line + line - 1, loc.column))


#: what a region's problem says when its process leaves the plan to be validated whole
REGION_UNSURE = "this part of the plan is not what its outline said: validated whole"


def plan_from_region(
    text: str,
    file: str,
    registry: ToolRegistry,
    select: Select,
    *,
    max_calls_per_turn: int = MAX_CALLS_PER_TURN,
) -> Plan | None:
    """The plan of a YAML ``text`` with only the turns ``select`` keeps, parsed alone (a
    part of a big plan: each process parses only its own turns); None when the text has
    no outline (``outline_turns``) or ``select`` validates the whole plan.

    The parts are chosen from the outline's guess of each turn's calls; the region
    parsed must be what the guess said (its turns where their lines are, as many calls
    each, ``turns`` the last key): anything else, or any problem, is PlanError, which has
    the plan validated whole, and decided whole if it is valid. The regions of every part
    agreeing with the guess is what makes the parts' turns and numbers the whole's."""
    outline = outline_turns(text)
    if outline is None:
        return None
    kept, validate = select(outline.sizes)
    if validate:
        return None
    count = len(outline.sizes)
    first, end = max(0, kept.start), min(kept.stop, count)
    here = [Turn(t, (), Location(file, outline.lines[t] + 1, 1)) for t in range(count)]
    if first >= end:
        return Plan(file, None, tuple(here))
    unsure = PlanError([Problem(Location(file, outline.lines[first] + 1, 1), "", REGION_UNSURE)])
    try:
        doc = parse_text(outline.region(text, first, end), file)
    except DocumentError as exc:
        raise PlanError([exc.problem, *unsure.problems]) from None
    data = doc.data
    raw_turns = data.get("turns") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(raw_turns, list):
        raise unsure
    if doc.root is not None or doc.aliased:
        # built from nodes (merge keys...), or aliases: what they add is bounded over the
        # whole document (MAX_ALIASED), which no region alone can tell
        raise unsure
    keys = list(data)
    if keys[-1] != "turns" or (first > 0 and len(keys) != 1) or len(raw_turns) != end - first:
        raise unsure
    places = doc.item_locations(("turns",)) or []
    for i, raw in enumerate(raw_turns):
        calls = _plain_turn(raw)
        line = places[i].line - 1 if i < len(places) else -1
        after = outline.lines[first + i + 1] if first + i + 1 < count else float("inf")
        if (
            calls is None
            or len(calls) != outline.sizes[first + i]
            or not outline.lines[first + i] <= line < after
        ):
            raise unsure
    if first == 0 and doc.locate(("turns",)) != Location(file, outline.turns_line + 1, 1):
        raise unsure
    plan = plan_from_document(
        doc,
        registry,
        max_calls_per_turn=max_calls_per_turn,
        first=(first, sum(outline.sizes[:first])),
    )
    here[first:end] = plan.turns
    return Plan(file, plan.name, tuple(here))
