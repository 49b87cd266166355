"""A validated plan: frozen, every call with its place in the file."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolrun.dataclass_init import fast_init
from toolrun.errors import Location
from toolrun.tools.inputs import Params

if TYPE_CHECKING:
    from pydantic import BaseModel

#: Calls one turn may hold (``toolrun.maxCallsPerTurn``); more is a located problem when the
#: plan is loaded, so validate, check and exec (also --dry-run) give the same answer.
MAX_CALLS_PER_TURN = 64


def turn_limit_message(calls: int, limit: int) -> str:
    """The problem of a turn with more than ``limit`` calls (located at the first one over)."""
    return (
        f"a turn holds at most {limit} calls (toolrun.maxCallsPerTurn) and this one has {calls}:"
        " split it into several turns or raise the limit"
    )


@dataclass(frozen=True, slots=True)
class InvalidInput(Params):
    """The params of a recorded call whose input its tool would have refused (the agent's
    own tool answered it with an error and went on): it gets an ``error`` result, as the
    agent saw it, and never runs (the executor answers it before any tool could see it)."""

    message: str


# (one per call of a plan: fast_init writes the slots directly, a third of the dataclass's
# own __init__, which was a tenth of loading a big plan)
@fast_init
@dataclass(frozen=True, slots=True)
class Call:
    """One tool call, validated against its tool's input model.

    ``input`` is the mapping as written (hooks and rules see it); ``params`` is
    the validated tool input the tool runs with (a built-in tool's Params object,
    another tool's model instance).
    """

    index: int  # 0-based position in the plan
    turn: int  # 0-based turn number
    id: str
    tool: str
    input: Mapping[str, Any]
    params: Params | BaseModel
    timeout: float | None
    location: Location


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a plan: its calls in order, and where it is in the file."""

    index: int
    calls: tuple[Call, ...]
    location: Location


@dataclass(frozen=True, slots=True)
class Plan:
    """A loaded plan: its file, its name, and its turns in order."""

    file: str
    name: str | None
    turns: tuple[Turn, ...]

    @property
    def calls(self) -> Iterator[Call]:
        for turn in self.turns:
            yield from turn.calls

    def __len__(self) -> int:
        return sum(len(t.calls) for t in self.turns)
