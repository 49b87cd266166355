"""One MCP server tool as a toolrun :class:`~toolrun.tools.base.Tool`.

The tool is named ``mcp__<server>__<tool>`` (characters other than letters, digits,
``_`` and ``-`` become ``_``, as in Claude Code). Its input model is built from the
tool's ``inputSchema``: unknown keys are allowed (the server decides), required
properties must be present, and declared properties must have their JSON type
(string, number, integer, boolean, array, object, null).

Only a tool annotated ``readOnlyHint: true`` is a read (concurrency-safe,
retry-safe, read-only); any other tool is treated as executing something.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model
from pydantic_core import PydanticCustomError, to_jsonable_python

from toolrun.errors import ToolError
from toolrun.tools.base import BaseTool, Concurrency, ToolContext, ToolKind, ToolOutput

if TYPE_CHECKING:
    from toolrun.tools.mcp.client import McpClient

JSON_TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def normalize_name(name: str) -> str:
    """A server or tool name as it appears in ``mcp__<server>__<tool>``."""
    return _UNSAFE.sub("_", name)


def mcp_tool_name(server: str, tool: str) -> str:
    return f"mcp__{normalize_name(server)}__{normalize_name(tool)}"


# ---------------------------------------------------------------------- input model


def json_type(value: Any) -> str:
    """The JSON type name of a Python value (``integer`` for integral numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _is(value: Any, expected: str) -> bool:
    actual = json_type(value)
    if expected == "number":
        return actual in ("number", "integer")
    if expected == "integer":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    return actual == expected


def _type_check(types: tuple[str, ...]) -> Callable[[Any], Any]:
    expected = " or ".join(types)

    def check(value: Any) -> Any:
        if any(_is(value, t) for t in types):
            return value
        raise PydanticCustomError(
            "json_type",
            "expected {expected}, got {actual}",
            {"expected": expected, "actual": json_type(value)},
        )

    return check


def _declared_types(schema: Any) -> tuple[str, ...]:
    """The known JSON types a property schema declares; () when it declares none."""
    if not isinstance(schema, Mapping):
        return ()
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names:
        return ()
    if not all(isinstance(n, str) and n in JSON_TYPES for n in names):
        return ()  # a type toolrun does not know: leave the checking to the server
    return tuple(dict.fromkeys(names))


class _Unset:
    """The default of an optional property that was not given: never sent.

    One instance (``UNSET``), kept by copies and pickles so that ``is`` finds it.
    """

    def __copy__(self) -> _Unset:
        return self

    def __deepcopy__(self, memo: Any) -> _Unset:
        return self

    def __reduce__(self) -> str:
        return "UNSET"

    def __repr__(self) -> str:
        return "<unset>"


UNSET: Any = _Unset()


class McpInput(BaseModel):
    """Base of every MCP tool's input model. ``arguments()`` is what is sent."""

    model_config = ConfigDict(frozen=True, extra="allow")

    # The tool's inputSchema as the server declared it (what `toolrun tools --schema` shows).
    mcp_input_schema: ClassVar[Mapping[str, Any] | None] = None

    def arguments(self) -> dict[str, Any]:
        """The input as JSON: the keys as written, unset optional properties left out.

        Built by hand, not by ``model_dump``: an unknown key may happen to equal an
        internal field name (``p0``), and both must be kept.
        """
        data: dict[str, Any] = {}
        for name, info in type(self).model_fields.items():
            value = getattr(self, name)
            if value is not UNSET:
                data[info.alias or name] = value
        data.update(self.model_extra or {})
        result: dict[str, Any] = to_jsonable_python(data)
        return result

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        if cls.mcp_input_schema is not None:
            schema = copy.deepcopy(dict(cls.mcp_input_schema))
            schema.pop("$schema", None)
            return schema
        return super().model_json_schema(*args, **kwargs)


def _model_name(name: str) -> str:
    words = re.split(r"[^A-Za-z0-9]+", name)
    return "".join(w[:1].upper() + w[1:] for w in words if w) + "Input"


def input_model_from_schema(name: str, schema: Any) -> type[McpInput]:
    """A pydantic model for a JSON Schema ``inputSchema``.

    Each declared property becomes an optional field (required ones without a
    default), checked against the property's ``type``; every other key is allowed.
    """
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        properties = {}
    required_list = schema.get("required") if isinstance(schema, Mapping) else None
    required = (
        {r for r in required_list if isinstance(r, str)}
        if isinstance(required_list, list)
        else set()
    )
    fields: dict[str, Any] = {}
    keys = [k for k in properties if isinstance(k, str)]
    keys += sorted(required - set(keys))
    for i, key in enumerate(keys):
        prop = properties.get(key)
        types = _declared_types(prop)
        annotation: Any = Annotated[Any, AfterValidator(_type_check(types))] if types else Any
        description = prop.get("description") if isinstance(prop, Mapping) else None
        info = Field(
            ... if key in required else UNSET,
            alias=key,
            description=description if isinstance(description, str) else None,
        )
        # internal names are never user-visible: properties may be any string
        fields[f"p{i}"] = (annotation, info)
    model: type[McpInput] = create_model(_model_name(name), __base__=McpInput, **fields)
    model.mcp_input_schema = copy.deepcopy(dict(schema)) if isinstance(schema, Mapping) else None
    return model


# ---------------------------------------------------------------------- output


def _size_of_base64(data: Any) -> int:
    if not isinstance(data, str):
        return 0
    text = data.strip()
    return max(0, len(text) * 3 // 4 - text[-2:].count("="))


def _summary(kind: str, mime: Any, size: int | None) -> str:
    what = mime if isinstance(mime, str) and mime else kind
    return f"[{what}, {size} bytes]" if size is not None else f"[{what}]"


def content_text(item: Any) -> str:
    """One content block as text: text as it is, anything else summarised."""
    if not isinstance(item, Mapping):
        return f"[{type(item).__name__}]"
    kind = item.get("type")
    if kind == "text":
        text = item.get("text")
        return text if isinstance(text, str) else ""
    if kind in ("image", "audio"):
        return _summary(str(kind), item.get("mimeType"), _size_of_base64(item.get("data")))
    if kind == "resource_link":
        return f"[resource {item.get('uri', '')}]".replace(" ]", "]")
    if kind == "resource":
        resource = item.get("resource")
        if isinstance(resource, Mapping):
            if isinstance(resource.get("text"), str):
                return str(resource["text"])
            size = _size_of_base64(resource.get("blob"))
            mime = resource.get("mimeType")
            uri = resource.get("uri", "")
            return f"[resource {uri}: {mime or 'binary'}, {size} bytes]"
        return "[resource]"
    return f"[{kind if isinstance(kind, str) else 'unknown'} content]"


def output_of(result: Mapping[str, Any], *, server: str = "") -> ToolOutput:
    """A ``tools/call`` result as a ToolOutput."""
    content = result.get("content")
    if content is None:
        content = []
    if not isinstance(content, list):
        raise ToolError(
            f"MCP server {server!r} answered tools/call with content that is not a list"
        )
    text = "\n".join(content_text(item) for item in content)
    metadata: dict[str, Any] = {}
    structured = result.get("structuredContent")
    if structured is not None:
        metadata["structuredContent"] = structured
        if not content:
            text = json.dumps(structured, ensure_ascii=False)
    return ToolOutput(text, is_error=result.get("isError") is True, metadata=metadata)


# ---------------------------------------------------------------------- the tool


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """MCP's behaviour hints. Hints from an untrusted server: only readOnlyHint is used."""

    title: str | None = None
    read_only: bool = False
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    @classmethod
    def from_json(cls, data: Any) -> ToolAnnotations:
        if not isinstance(data, Mapping):
            return cls()

        def flag(key: str) -> bool | None:
            value = data.get(key)
            return value if isinstance(value, bool) else None

        title = data.get("title")
        return cls(
            title=title if isinstance(title, str) else None,
            read_only=data.get("readOnlyHint") is True,
            destructive=flag("destructiveHint"),
            idempotent=flag("idempotentHint"),
            open_world=flag("openWorldHint"),
        )


class McpTool(BaseTool[McpInput]):
    """``mcp__<server>__<tool>``: runs the tool through its server's client.

    A tool without a client (listed by :func:`~toolrun.tools.mcp.list_mcp_tools` for
    validate/check, or after its server was shut down) can be validated and decided
    on but not run.
    """

    def __init__(
        self, server: str, definition: Mapping[str, Any], client: McpClient | None = None
    ) -> None:
        self.server = server
        self.tool_name: str = str(definition["name"])
        self.definition = definition
        self.name = mcp_tool_name(server, self.tool_name)
        self.annotations = ToolAnnotations.from_json(definition.get("annotations"))
        description = definition.get("description")
        title = definition.get("title") or self.annotations.title
        self.description = (
            description
            if isinstance(description, str) and description.strip()
            else title
            if isinstance(title, str)
            else ""
        )
        read_only = self.annotations.read_only
        self.kind = ToolKind.READ if read_only else ToolKind.EXECUTE
        self.is_retry_safe = read_only
        self.concurrency: Concurrency = "always" if read_only else "never"
        self.input_model = input_model_from_schema(self.name, definition.get("inputSchema"))
        self.client = client

    def is_concurrency_safe(self, input: McpInput, ctx: ToolContext | None = None) -> bool:
        return self.annotations.read_only

    def is_read_only(self, input: McpInput, ctx: ToolContext | None = None) -> bool:
        return self.annotations.read_only

    def detached(self) -> McpTool:
        """The same tool without its server (for validate and check)."""
        tool = McpTool.__new__(McpTool)
        tool.__dict__.update(self.__dict__)
        tool.client = None
        return tool

    async def run(self, input: McpInput, ctx: ToolContext) -> ToolOutput:
        client = self.client
        if client is None:
            raise ToolError(f"MCP server {self.server!r} is not running (tool {self.name})")
        result = await client.call_tool(self.tool_name, input.arguments())
        return output_of(result, server=self.server)

    def __repr__(self) -> str:
        return f"<McpTool {self.name} ({'read-only' if self.annotations.read_only else 'execute'})>"


class UnavailableTool(BaseTool[McpInput]):
    """``mcp__<server>__<any>`` of a server that could not be started.

    Its tools are not known: any name of it and any input load, so that the plan runs,
    and each such call fails alone, with why the server did not start. Decided like any
    tool that executes something.
    """

    kind = ToolKind.EXECUTE
    concurrency: Concurrency = "never"

    def __init__(self, server: str, name: str, reason: str) -> None:
        self.server = server
        self.name = name
        #: why it cannot run (the executor fails a dry-run call with it, too)
        self.unavailable = reason
        self.description = f"a tool of MCP server {server!r}, which could not be started"
        self.input_model = input_model_from_schema(name, None)

    async def run(self, input: McpInput, ctx: ToolContext) -> ToolOutput:
        raise ToolError(self.unavailable)

    def __repr__(self) -> str:
        return f"<UnavailableTool {self.name}>"


def unavailable_family(server: str, reason: str) -> tuple[str, Callable[[str], BaseTool[Any]]]:
    """The name prefix of ``server``'s tools and the factory of their stand-ins."""
    return f"mcp__{normalize_name(server)}__", lambda name: UnavailableTool(server, name, reason)
