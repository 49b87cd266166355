"""JSON Schemas for plan and config files."""

from __future__ import annotations

from typing import Any

from toolrun.config.schema import ConfigFile
from toolrun.plan.schema import PlanFile
from toolrun.tools import default_registry

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def plan_schema() -> dict[str, Any]:
    """The plan schema; each known tool's input schema applies when ``tool`` names it."""
    schema = PlanFile.model_json_schema()
    defs: dict[str, Any] = schema.setdefault("$defs", {})
    conditions: list[dict[str, Any]] = []
    registry = default_registry()
    for name in registry.names():
        tool = registry.get(name)
        assert tool is not None
        input_schema = tool.input_model.model_json_schema(
            by_alias=True, ref_template="#/$defs/{model}"
        )
        defs.update(input_schema.pop("$defs", {}))
        def_name = f"{name}Input"
        defs[def_name] = input_schema
        conditions.append(
            {
                "if": {"properties": {"tool": {"const": name}}, "required": ["tool"]},
                "then": {"properties": {"input": {"$ref": f"#/$defs/{def_name}"}}},
            }
        )
    call = defs["CallSpec"]
    call["allOf"] = conditions
    call["properties"]["tool"]["examples"] = registry.names()
    return {"$schema": DRAFT, **schema}


def config_schema() -> dict[str, Any]:
    return {"$schema": DRAFT, **ConfigFile.model_json_schema(by_alias=True)}
