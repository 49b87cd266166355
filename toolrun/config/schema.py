"""The config file format (design §3): toolrun.yaml, which is also Claude Code's settings shape."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ModeName = Literal["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]


class _Open(BaseModel):
    """Claude Code sections: keys toolrun does not use are accepted and ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class PermissionsSection(_Open):
    defaultMode: ModeName | None = Field(default=None, description="The permission mode.")
    allow: list[str] = Field(default_factory=list, description="Rules that allow a call.")
    ask: list[str] = Field(default_factory=list, description="Rules that make a call ask.")
    deny: list[str] = Field(default_factory=list, description="Rules that deny a call.")
    additionalDirectories: list[str] = Field(
        default_factory=list, description="Directories outside the workspace that count as inside."
    )


class HookCommandSpec(_Open):
    type: Literal["command"] = Field(
        default="command", description="toolrun runs command hooks only."
    )
    command: str = Field(min_length=1, description="Run as `sh -c COMMAND` in the workspace.")
    timeout: float | None = Field(default=None, gt=0, description="Seconds; default hookTimeout.")
    if_: str | None = Field(
        default=None, alias="if", description="One permission rule used as a pre-filter."
    )


class HookMatcherSpec(_Open):
    matcher: str = Field(
        default="", description="Empty or * for all; A|B exact names; anything else a regex."
    )
    hooks: list[HookCommandSpec] = Field(description="Hooks run when the matcher matches.")
    sequential: bool = Field(
        default=False, description="Run these hooks in order, each seeing the previous rewrite."
    )


class McpServerSpec(_Open):
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None


class ToolrunSection(BaseModel):
    """toolrun's own settings. Unknown keys here are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    maxConcurrency: int | None = Field(default=None, ge=1, description="Global call limit (10).")
    kindLimits: dict[Literal["read", "write", "execute", "network"], int] | None = Field(
        default=None, description="Per-kind limits, e.g. {execute: 4}."
    )
    maxCallsPerTurn: int | None = Field(default=None, ge=1, description="Calls per turn (64).")
    siblingAbortOnBashError: bool | None = Field(
        default=None, description="A failing Bash call cancels its concurrent run."
    )
    hookTimeout: float | None = Field(default=None, gt=0, description="Hook timeout, s (600).")
    hookFailure: Literal["open", "closed"] | None = Field(
        default=None, description="closed: a hook timeout, crash, 127 or bad JSON denies."
    )
    loadClaudeSettings: bool | None = Field(
        default=None, description="Also read ~/.claude and .claude settings files."
    )


class ConfigFile(_Open):
    """A toolrun.yaml or a Claude Code settings.json."""

    model_config = ConfigDict(
        extra="ignore", frozen=True, json_schema_extra={"title": "toolrun config"}
    )

    permissions: PermissionsSection | None = None
    hooks: dict[str, list[HookMatcherSpec]] | None = Field(
        default=None, description="Event name → matcher groups (Claude Code's shape)."
    )
    mcpServers: dict[str, McpServerSpec] | None = None
    toolrun: ToolrunSection | None = None
