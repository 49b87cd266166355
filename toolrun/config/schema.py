"""The config file format (design §3): toolrun.yaml, which is also Claude Code's settings shape."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    field_validator,
    model_validator,
)

from toolrun.config.models import ENFORCE
from toolrun.config.sizes import SIZE_PATTERN, parse_size
from toolrun.validation import did_you_mean

#: ``auto`` (Claude Code's classifier mode) loads and is decided as ``default``: toolrun runs
#: no classifier.
ModeName = Literal["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions", "auto"]


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
    disableBypassPermissionsMode: Literal["disable"] | None = Field(
        default=None, description='"disable": bypassPermissions mode is an error.'
    )


class HookCommandSpec(_Open):
    type: str = Field(
        default="command",
        min_length=1,
        description="toolrun runs command hooks; other types load with a warning and give "
        "no decision (a denial under hookFailure: closed).",
    )
    # an empty or missing command is a located error of the loader (one message for all)
    command: str = Field(default="", description="Run as `sh -c COMMAND` in the workspace.")
    timeout: float | None = Field(default=None, gt=0, description="Seconds; default hookTimeout.")
    if_: str | None = Field(
        default=None, alias="if", description="One permission rule used as a pre-filter."
    )
    async_: bool | None = Field(
        default=None, alias="async", description="Run in the background; decides nothing."
    )
    url: str | None = Field(default=None, description="type http: the URL to POST to.")
    headers: dict[str, str] | None = Field(
        default=None, description="type http: headers; $VAR only for allowedEnvVars."
    )
    allowedEnvVars: list[str] | None = Field(
        default=None, description="type http: env vars the headers may interpolate."
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
    """One ``.mcp.json``-style server: stdio (``command``) or HTTP/SSE (``url``)."""

    type: Literal["stdio", "http", "streamable-http", "sse"] | None = Field(
        default=None, description="Transport; a url without a type is streamable HTTP."
    )
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = Field(
        default_factory=dict, description="HTTP headers; ${VAR} and ${VAR:-default} expand."
    )


class ExampleSpec(BaseModel):
    """A rule self-test: one call and the decision the rules must give it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call: str | None = Field(
        default=None, description="The call in rule form, e.g. 'Bash(git push origin main)'."
    )
    tool: str | None = Field(default=None, description="The tool (with input; instead of call).")
    input: dict[str, Any] | None = Field(default=None, description="The tool's input.")
    expect: Literal["allow", "ask", "deny"] = Field(description="The decision the rules give.")
    mode: ModeName | None = Field(default=None, description="Decide in this mode.")

    @model_validator(mode="after")
    def _one_call(self) -> ExampleSpec:
        if (self.call is None) == (self.tool is None):
            raise ValueError("give either call: 'Tool(arg)' or tool: with input:")
        if self.call is not None and self.input is not None:
            raise ValueError("input goes with tool:, not with call:")
        return self


class VerifierSpec(BaseModel):
    """One ``toolrun.autoVerify`` entry: a diagnostics command run after file edits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="Named in results, e.g. 'ruff'.")
    files: list[str] = Field(
        min_length=1,
        description="Gitignore-style patterns, relative to the workspace, of the files it checks.",
    )
    # an empty command is a located error of the loader (as for hooks)
    command: str = Field(
        description="Run as `sh -c COMMAND` in the workspace; {files} becomes the written "
        "files that match, shell-quoted."
    )
    format: Literal["sarif", "json", "text"] = Field(
        default="text",
        description="sarif (2.1.0); json (ruff, mypy -O json, pyright, eslint); text "
        "(file:line:col: severity: message, or tsc's file(line,col): error TSn: message).",
    )
    timeout: float = Field(default=60.0, gt=0, description="Seconds (60).")
    block: bool = Field(
        default=False, description="New errors make the edit's result an error."
    )


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
        default=None,
        description="Also read the user's ~/.claude/settings.json (the workspace's "
        ".claude/settings*.json and managed settings are always read).",
    )
    strict: bool | None = Field(
        default=None, description="Unknown keys and other config warnings are errors (exit 3)."
    )
    plugins: list[str] | None = Field(
        default=None,
        description="Claude Code plugin folders whose hooks/hooks.json hooks run (with "
        "CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA set).",
    )
    examples: list[ExampleSpec] | None = Field(
        default=None, description="Rule self-tests, checked by validate and check."
    )
    examplesFile: str | None = Field(
        default=None, description="A YAML/JSON file holding a list of more examples."
    )
    maxStoredOutput: NonNegativeInt | Annotated[str, Field(pattern=SIZE_PATTERN)] | None = Field(
        default=None,
        description=(
            "The most of one call's whole output kept beside the journal when the display "
            "is trimmed: bytes, or a size such as 64MiB or 1GB (64MiB)."
        ),
    )

    @field_validator("maxStoredOutput", mode="before")
    @classmethod
    def _size(cls, value: object) -> int | None:
        return None if value is None else parse_size(value)
    autoVerify: list[VerifierSpec] | None = Field(
        default=None,
        description="Diagnostics commands run after each successful Edit, MultiEdit, Write "
        "and ApplyPatch on the files they match (off unless set).",
    )
    enforce: Literal["auto", "required", "off"] | None = Field(
        default=None,
        description="Where a Bash call allowed on toolrun's own judgement runs: auto (a "
        "read-only or workspace jail where one can be made, said where not), required (such "
        "a call asks when no jail can hold it), off (never jailed) (auto).",
    )

    @field_validator("enforce", mode="before")
    @classmethod
    def _enforce(cls, value: object) -> object:
        # a misspelt value of a security setting names the one meant
        if isinstance(value, str) and value not in ENFORCE:
            raise ValueError(f"{value!r} is not one of 'auto', 'required', 'off'"
                             f"{did_you_mean(value, ENFORCE)}")
        return value


class SandboxFilesystemSection(_Open):
    allowWrite: list[str] = Field(default_factory=list, description="Extra writable paths.")
    denyWrite: list[str] = Field(default_factory=list, description="Paths kept read-only.")
    denyRead: list[str] = Field(default_factory=list, description="Paths made unreadable.")
    allowRead: list[str] = Field(
        default_factory=list,
        description="Paths readable again inside a denyRead region (the more specific wins).",
    )
    allowManagedReadPathsOnly: bool | None = Field(
        default=None, description="Managed settings only: only their allowRead paths count."
    )


class SandboxNetworkSection(_Open):
    allowedDomains: list[str] | None = Field(
        default=None, description="Domains reachable through toolrun's proxy (none: no network)."
    )
    allowLocalBinding: bool | None = None
    allowPrivateHosts: list[str] = Field(
        default_factory=list,
        description=(
            "Exact hosts (host or host:port) the proxy may reach on a loopback, private, "
            "link-local or this host's own address (none: never)."
        ),
    )
    allowUnixSockets: list[str] = Field(default_factory=list)
    allowAllUnixSockets: bool | None = None
    deniedDomains: list[str] = Field(
        default_factory=list,
        description="Domains refused by the proxy and to WebFetch, even when allowed.",
    )
    allowManagedDomainsOnly: bool | None = Field(
        default=None,
        description="Managed settings only: only their allowedDomains and WebFetch(domain:) "
        "allow rules count.",
    )


class CredentialFileSpec(_Open):
    path: str = Field(min_length=1)
    mode: Literal["deny", "mask"] = "deny"


class CredentialEnvSpec(_Open):
    name: str = Field(min_length=1)
    mode: Literal["deny", "mask"] = "deny"


class SandboxCredentialsSection(_Open):
    files: list[CredentialFileSpec] = Field(default_factory=list)
    envVars: list[CredentialEnvSpec] = Field(default_factory=list)


class SandboxSection(_Open):
    """Claude Code's ``sandbox`` settings: Bash under bubblewrap (design §9)."""

    enabled: bool | None = Field(default=None, description="Run Bash calls under bubblewrap.")
    autoAllowBashIfSandboxed: bool | None = Field(
        default=None, description="A sandboxed Bash call that would ask is allowed."
    )
    excludedCommands: list[str] = Field(
        default_factory=list, description="Bash patterns that run outside the sandbox."
    )
    allowUnsandboxedCommands: bool | None = Field(
        default=None, description="false: calls that would leave the sandbox are denied."
    )
    failIfUnavailable: bool | None = Field(
        default=None, description="true: no bubblewrap is an error, not a warning."
    )
    filesystem: SandboxFilesystemSection | None = None
    network: SandboxNetworkSection | None = None
    credentials: SandboxCredentialsSection | None = None
    bwrapPath: str | None = Field(default=None, description="The bwrap program to use.")


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
    sandbox: SandboxSection | None = None
    allowManagedPermissionRulesOnly: bool | None = Field(
        default=None, description="Managed settings only: other sources' rules are not used."
    )
    allowManagedHooksOnly: bool | None = Field(
        default=None, description="Managed settings only: other sources' hooks are not used."
    )
    disableAllHooks: bool | None = Field(
        default=None,
        description="true: no hook runs (in managed settings: not even managed hooks).",
    )
    allowedHttpHookUrls: list[str] | None = Field(
        default=None, description="URL patterns (* wildcard) http hooks may target."
    )
    httpHookAllowedEnvVars: list[str] | None = Field(
        default=None, description="Env vars any http hook's headers may interpolate."
    )
