"""Describing registered tools."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolrun.config.models import Config
from toolrun.errors import UsageError
from toolrun.tools import ToolRegistry, default_registry
from toolrun.tools.base import concurrency_of


@dataclass(frozen=True, slots=True)
class ToolRow:
    name: str
    kind: str
    concurrency: str
    retry_safe: bool
    source: str
    description: str

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "concurrency_safe": self.concurrency,
            "retry_safe": self.retry_safe,
            "source": self.source,
            "description": self.description,
        }


def tool_registry(config: Config | None = None) -> ToolRegistry:
    """Built-ins and plugins, plus the MCP servers' tools when the config names servers."""
    registry = default_registry()
    if config is not None and config.mcp_servers:
        from toolrun.tools.mcp import register_mcp_tools

        register_mcp_tools(config, registry)
    return registry


def describe_tools(registry: ToolRegistry | None = None) -> list[ToolRow]:
    registry = registry or default_registry()
    return [
        ToolRow(
            name=entry.tool.name,
            kind=str(entry.tool.kind),
            concurrency=concurrency_of(entry.tool),
            retry_safe=entry.tool.is_retry_safe,
            source=entry.source,
            description=entry.tool.description.strip().splitlines()[0]
            if entry.tool.description.strip()
            else "",
        )
        for entry in registry
    ]


def tool_schema(name: str, registry: ToolRegistry | None = None) -> dict[str, Any]:
    registry = registry or default_registry()
    tool = registry.get(name)
    if tool is None:
        hint = registry.suggest(name)
        raise UsageError(
            f"unknown tool {name!r}"
            + (f" (did you mean {hint!r}?)" if hint else "")
            + "; see `toolrun tools`"
        )
    schema: dict[str, Any] = tool.input_model.model_json_schema(by_alias=True)
    schema.setdefault("title", f"{tool.name} input")
    return schema
