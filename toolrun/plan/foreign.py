"""The input of a tool toolrun does not have (a transcript's own tool)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ForeignInput(BaseModel):
    """The input of a tool toolrun does not have, kept as it is (it is only decided)."""

    model_config = ConfigDict(extra="allow", frozen=True)
