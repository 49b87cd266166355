"""The base of every tool's pydantic input model (imported only with such a model)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ToolInput(BaseModel):
    """Base of every tool's input model: frozen, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
