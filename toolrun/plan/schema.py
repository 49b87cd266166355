"""The plan file format as users write it (design §2): validation and JSON Schema."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CallSpec(_Strict):
    """One tool call."""

    id: str | None = Field(
        default=None,
        min_length=1,
        description="Unique id within the plan; default call-<n> (1-based position).",
    )
    tool: str = Field(description="Tool name: Bash, Read, Edit, ..., or mcp__server__tool.")
    input: dict[str, Any] = Field(
        default_factory=dict, description="The tool's input, with Claude Code's field names."
    )
    timeout: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,  # (an endless timeout is no bound, and 1e400 reads as one)
        description="Seconds before the call is cancelled.",
    )


class TurnSpec(_Strict):
    """One model turn: a batch of calls that toolrun partitions into runs."""

    calls: list[CallSpec] = Field(description="The calls of this turn, in order.")


class PlanFile(_Strict):
    """A toolrun plan: ``turns`` of calls, or ``calls`` as shorthand for one turn."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={"title": "toolrun plan"},
    )

    version: Literal[1] | None = Field(default=None, description="Plan format version.")
    name: str | None = Field(default=None, description="A name shown in reports.")
    description: str | None = Field(default=None, description="Free text.")
    turns: list[TurnSpec] | None = Field(default=None, description="Batches, one per model turn.")
    calls: list[CallSpec] | None = Field(default=None, description="Shorthand for a single turn.")


class PlanHeader(_Strict):
    """PlanFile with its lists left unchecked, so each call can be validated on its own
    and every problem in the file is reported at once."""

    version: Literal[1] | None = None
    name: str | None = None
    description: str | None = None
    turns: list[Any] | None = None
    calls: list[Any] | None = None


class TurnHeader(_Strict):
    calls: list[Any]
