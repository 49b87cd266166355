"""McpTool without a server: names, kinds, the input model built from inputSchema, output."""

from __future__ import annotations

import copy
import datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from toolrun.errors import PlanError, ToolError
from toolrun.plan import load_plan
from toolrun.tools import ToolContext, ToolKind, ToolRegistry
from toolrun.tools.base import Tool, concurrency_of
from toolrun.tools.mcp import McpTool, input_model_from_schema, mcp_tool_name
from toolrun.tools.mcp.tools import content_text, output_of

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "What to say."},
        "times": {"type": "integer"},
        "ratio": {"type": "number"},
        "loud": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "meta": {"type": "object"},
        "nothing": {"type": "null"},
        "maybe": {"type": ["string", "null"]},
        "anything": {},
        "model_config": {"type": "string"},
    },
    "required": ["text", "hidden"],
}


def errors(data: dict[str, Any]) -> list[tuple[tuple[Any, ...], str, str]]:
    model = input_model_from_schema("mcp__s__t", SCHEMA)
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    return [(e["loc"], e["type"], e["msg"]) for e in info.value.errors()]


def test_names_follow_claude_code() -> None:
    assert mcp_tool_name("files", "read_file") == "mcp__files__read_file"
    assert mcp_tool_name("my server", "list.things") == "mcp__my_server__list_things"
    assert mcp_tool_name("a-b", "c-d") == "mcp__a-b__c-d"


def test_required_properties_and_json_types_are_checked() -> None:
    assert errors({"text": "hi"}) == [(("hidden",), "missing", "Field required")]
    assert errors({"text": 3, "hidden": 1, "times": 1.5, "ratio": True, "loud": "yes"}) == [
        (("text",), "json_type", "expected string, got integer"),
        (("times",), "json_type", "expected integer, got number"),
        (("ratio",), "json_type", "expected number, got boolean"),
        (("loud",), "json_type", "expected boolean, got string"),
    ]
    assert errors({"text": "x", "hidden": 0, "tags": {"a": 1}, "meta": [], "nothing": 0}) == [
        (("tags",), "json_type", "expected array, got object"),
        (("meta",), "json_type", "expected object, got array"),
        (("nothing",), "json_type", "expected null, got integer"),
    ]
    assert errors({"text": "x", "hidden": 0, "maybe": 1}) == [
        (("maybe",), "json_type", "expected string or null, got integer")
    ]


def test_valid_input_keeps_what_was_written_and_allows_unknown_keys() -> None:
    model = input_model_from_schema("mcp__s__t", SCHEMA)
    value = model.model_validate(
        {
            "text": "hi",
            "hidden": [1],
            "times": 2.0,  # an integral number is an integer in JSON Schema
            "ratio": 1,
            "maybe": None,
            "anything": {"x": 1},
            "model_config": "a property named like a pydantic attribute",
            "extra": {"nested": True},
            "p0": "an unknown key named like an internal field",
            "when": datetime.date(2024, 1, 2),
        }
    )
    assert value.arguments() == {
        "text": "hi",
        "hidden": [1],
        "times": 2.0,
        "ratio": 1,
        "maybe": None,
        "anything": {"x": 1},
        "model_config": "a property named like a pydantic attribute",
        "extra": {"nested": True},
        "p0": "an unknown key named like an internal field",
        "when": "2024-01-02",
    }
    assert copy.deepcopy(value).arguments() == value.arguments()
    # optional properties left out are not sent as null
    assert model.model_validate({"text": "hi", "hidden": 0}).arguments() == {
        "text": "hi",
        "hidden": 0,
    }


def test_a_tool_without_a_usable_schema_accepts_any_object() -> None:
    for schema in (None, {}, {"type": "object"}, {"properties": "nonsense", "required": 3}):
        model = input_model_from_schema("mcp__s__t", schema)
        assert model.model_validate({"a": 1}).arguments() == {"a": 1}
    # unknown type names are left to the server
    model = input_model_from_schema("x", {"properties": {"a": {"type": "decimal"}}})
    assert model.model_validate({"a": "1.0"}).arguments() == {"a": "1.0"}


def test_the_json_schema_shown_is_the_servers_own() -> None:
    model = input_model_from_schema("mcp__s__t", {"$schema": "x", **SCHEMA})
    assert model.model_json_schema() == SCHEMA


def test_read_only_hint_decides_kind_concurrency_and_retry() -> None:
    reader = McpTool("s", {"name": "look", "annotations": {"readOnlyHint": True}})
    ctx = ToolContext.for_workspace(Path("/tmp"))
    params = reader.input_model.model_validate({})
    assert isinstance(reader, Tool)
    assert reader.name == "mcp__s__look" and reader.tool_name == "look"
    assert reader.kind is ToolKind.READ
    assert reader.is_concurrency_safe(params) and reader.is_read_only(params, ctx)
    assert reader.is_retry_safe and concurrency_of(reader) == "always"
    assert reader.affected_paths(params, ctx) == ()
    for hints in (
        None,
        {},
        {"readOnlyHint": False},
        {"readOnlyHint": "true"},
        {"destructiveHint": False, "idempotentHint": True},
    ):
        other = McpTool("s", {"name": "do", "annotations": hints})
        p = other.input_model.model_validate({})
        assert other.kind is ToolKind.EXECUTE
        assert not other.is_concurrency_safe(p) and not other.is_read_only(p)
        assert not other.is_retry_safe and concurrency_of(other) == "never"


def test_description_falls_back_to_the_title() -> None:
    assert McpTool("s", {"name": "a", "description": "Does a."}).description == "Does a."
    assert McpTool("s", {"name": "a", "title": "The A"}).description == "The A"
    assert McpTool("s", {"name": "a", "annotations": {"title": "A!"}}).description == "A!"
    assert McpTool("s", {"name": "a"}).description == ""


@pytest.mark.anyio
async def test_a_tool_without_its_server_cannot_run() -> None:
    tool = McpTool("files", {"name": "read"})
    with pytest.raises(ToolError, match="MCP server 'files' is not running"):
        await tool.run(tool.input_model.model_validate({}), ToolContext.for_workspace("/"))


def test_plan_validation_names_the_file_position_and_json_type(tmp_path: Path) -> None:
    registry = ToolRegistry()
    registry.register(McpTool("s", {"name": "t", "inputSchema": SCHEMA}), source="mcp:s")
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "calls:\n"
        "  - {tool: mcp__s__t, input: {text: hi, hidden: 1, other: ok}}\n"
        "  - {tool: mcp__s__t, input: {text: 3}}\n"
    )
    with pytest.raises(PlanError) as info:
        load_plan(plan, registry, display="plan.yaml")
    assert [str(p) for p in info.value.problems] == [
        "plan.yaml:3:23: calls[1].input.hidden: missing required key 'hidden'",
        "plan.yaml:3:31: calls[1].input.text: expected string, got integer",
    ]


def test_output_joins_text_and_summarises_the_rest() -> None:
    assert content_text({"type": "text", "text": "hi"}) == "hi"
    assert content_text({"type": "image", "mimeType": "image/png", "data": "AAAA"}) == (
        "[image/png, 3 bytes]"
    )
    assert content_text({"type": "audio", "data": "AAA="}) == "[audio, 2 bytes]"
    assert content_text({"type": "resource_link", "uri": "file:///a"}) == "[resource file:///a]"
    assert content_text({"type": "resource", "resource": {"uri": "u", "text": "body"}}) == "body"
    assert (
        content_text(
            {"type": "resource", "resource": {"uri": "u", "blob": "AAAA", "mimeType": "x/y"}}
        )
        == "[resource u: x/y, 3 bytes]"
    )
    assert content_text({"type": "video"}) == "[video content]"
    out = output_of(
        {
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "isError": True,
            "structuredContent": {"n": 1},
        }
    )
    assert (out.output, out.is_error, dict(out.metadata)) == (
        "a\nb",
        True,
        {"structuredContent": {"n": 1}},
    )
    only_structured = output_of({"content": [], "structuredContent": {"n": 1}})
    assert only_structured.output == '{"n": 1}' and not only_structured.is_error
    with pytest.raises(ToolError, match="MCP server 's' answered tools/call with content"):
        output_of({"content": "text"}, server="s")
