"""The merged configuration toolrun works from: frozen, every rule and hook with its source.

These are plain frozen dataclasses (cheap, hashable, click- and pydantic-free);
the file-level schema that validates what users write lives in
:mod:`toolrun.config.schema`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from toolrun.config.sandbox import SandboxSettings
from toolrun.errors import Location, Problem

#: toolrun.maxStoredOutput's default
DEFAULT_MAX_STORED_OUTPUT = 64 * 1024 * 1024
Behavior = Literal["allow", "ask", "deny"]
PermissionMode = Literal["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "plan",
    "dontAsk",
    "bypassPermissions",
)
#: Mode names that load and are decided as another mode: ``auto`` is Claude Code's
#: classifier mode (toolrun runs no classifier: it decides as ``default``, where the
#: classifier would have been asked).
MODE_ALIASES: Mapping[str, PermissionMode] = MappingProxyType({"auto": "default"})
HOOK_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch")


class SourceKind(enum.IntEnum):
    """Where a setting came from. Lower value = higher precedence."""

    MANAGED = -1  # managed settings (/etc/claude-code, --managed-settings): above everything
    CLI = 0  # --mode and other flags
    SETTINGS = 1  # --settings FILE
    TOOLRUN = 2  # toolrun.yaml (discovered, --config or TOOLRUN_CONFIG)
    LOCAL = 3  # .claude/settings.local.json
    PROJECT = 4  # .claude/settings.json
    USER = 5  # ~/.claude/settings.json

    @property
    def label(self) -> str:
        return {
            SourceKind.MANAGED: "managed settings",
            SourceKind.CLI: "command line",
            SourceKind.SETTINGS: "--settings",
            SourceKind.TOOLRUN: "toolrun config",
            SourceKind.LOCAL: "Claude local settings",
            SourceKind.PROJECT: "Claude project settings",
            SourceKind.USER: "Claude user settings",
        }[self]


@dataclass(frozen=True, slots=True)
class SettingSource:
    """A place a setting was written: file and line, plus the root for ``/``-anchored paths.

    ``file`` is None for command-line flags; then ``flag`` names the flag.
    """

    kind: SourceKind
    file: Path | None
    line: int
    root: Path
    flag: str = ""

    def __str__(self) -> str:
        if self.file is None:
            return self.flag or self.kind.label
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class PermissionRule:
    """One allow, ask or deny rule, with the settings source it came from."""

    behavior: Behavior
    text: str
    source: SettingSource


@dataclass(frozen=True, slots=True)
class HookCommand:
    """One hook command of a matcher: what runs, its time limit, where it was configured."""

    command: str
    timeout: float | None  # seconds; None → toolrun.hookTimeout
    source: SettingSource
    type: str = "command"
    # Claude Code's handler-level ``if``: one permission rule used as a pre-filter.
    if_rule: str | None = None
    #: ``async: true``: runs in the background; its output never decides anything
    async_: bool = False
    #: ``type: http``: the URL the payload is POSTed to, its headers (``$VAR`` expanded
    #: only for the names in ``allowed_env_vars``)
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    allowed_env_vars: tuple[str, ...] = ()
    #: a hook of a Claude Code plugin (``toolrun.plugins``): CLAUDE_PLUGIN_ROOT and
    #: CLAUDE_PLUGIN_DATA are set for it
    plugin_root: Path | None = None
    plugin_data: Path | None = None


@dataclass(frozen=True, slots=True)
class HookMatcher:
    """A matcher of one hook event and the commands it runs for the tools it matches."""

    event: str
    matcher: str
    hooks: tuple[HookCommand, ...]
    source: SettingSource
    sequential: bool = False


@dataclass(frozen=True, slots=True)
class RuleExample:
    """A rule self-test (``toolrun.examples``): a call and the decision it must get.

    ``call`` is the rule-like form (``Bash(git push)``) or None when ``tool`` and
    ``input`` are given; ``path`` and ``location`` say where it was written.
    """

    expect: Behavior
    location: Location
    path: str
    call: str | None = None
    tool: str | None = None
    input: Mapping[str, Any] | None = None
    mode: PermissionMode | None = None


@dataclass(frozen=True, slots=True)
class Verifier:
    """A ``toolrun.autoVerify`` entry (see :mod:`toolrun.verify`): like a hook command, it
    comes from the config, never from a plan."""

    name: str
    files: tuple[str, ...]  # gitignore-style patterns, relative to the workspace
    command: str  # ``{files}`` becomes the matching written files, shell-quoted
    format: Literal["sarif", "json", "text"]
    timeout: float
    block: bool
    source: SettingSource


def _frozen(d: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(d or {}))


#: toolrun.enforce: where a Bash call allowed on toolrun's own judgement runs (#25)
Enforce = Literal["auto", "required", "off"]
ENFORCE: tuple[Enforce, ...] = ("auto", "required", "off")


@dataclass(frozen=True, slots=True)
class ToolrunSettings:
    """The ``toolrun:`` section: limits, timeouts and the other knobs of toolrun itself."""

    max_concurrency: int = 10
    kind_limits: Mapping[str, int] = field(default_factory=_frozen)
    max_calls_per_turn: int = 64
    sibling_abort_on_bash_error: bool = False
    hook_timeout: float = 600.0
    hook_failure: Literal["open", "closed"] = "open"
    load_claude_settings: bool = False
    #: the most of one call's whole output kept beside the journal (toolrun.maxStoredOutput)
    max_stored_output: int = DEFAULT_MAX_STORED_OUTPUT
    auto_verify: tuple[Verifier, ...] = ()
    #: toolrun.enforce: auto (jail judged calls where a jail can be made), required (a
    #: judged call that no jail can hold asks), off (never jail)
    enforce: Enforce = "auto"


@dataclass(frozen=True, slots=True)
class Config:
    """Everything merged from all sources, highest precedence first."""

    workspace: Path
    default_mode: PermissionMode = "default"
    mode_source: SettingSource | None = None
    # Rules from all sources concatenated, highest-precedence source first.
    rules: tuple[PermissionRule, ...] = ()
    additional_directories: tuple[Path, ...] = ()
    hooks: tuple[HookMatcher, ...] = ()
    mcp_servers: Mapping[str, Mapping[str, Any]] = field(default_factory=_frozen)
    toolrun: ToolrunSettings = field(default_factory=ToolrunSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    files: tuple[Path, ...] = ()  # the files that were read, highest precedence first
    #: settings files that were found and not read (the user's ~/.claude/settings.json
    #: without loadClaudeSettings): each is also a warning
    unloaded: tuple[Path, ...] = ()
    #: rules that load but are skipped or read in a way worth saying (``file:line: ...``)
    warnings: tuple[str, ...] = ()
    #: the same warnings as problems, located where a file says so (CI annotations need
    #: the file and line apart from the text)
    notes: tuple[Problem, ...] = ()
    #: Claude Code keys toolrun knows but does not enforce (``statusLine``, ``hooks.Stop``)
    ignored: tuple[str, ...] = ()
    #: rule self-tests from every source (toolrun.examples, examplesFile)
    examples: tuple[RuleExample, ...] = ()
    #: what managed settings changed (rules or hooks of other sources not used), to explain
    policy_notes: tuple[str, ...] = ()
    #: where managed settings set ``sandbox.network.allowManagedDomainsOnly`` (None: not
    #: set), and their ``allowedDomains``: a WebFetch no managed allow covers is denied
    domains_lock: SettingSource | None = None
    managed_domains: tuple[str, ...] = ()
    #: Claude Code's ``allowedHttpHookUrls`` / ``httpHookAllowedEnvVars``, merged across
    #: sources (None: no source sets it, no restriction; an empty tuple allows nothing)
    allowed_http_hook_urls: tuple[str, ...] | None = None
    http_hook_allowed_env_vars: tuple[str, ...] | None = None

    def rules_for(self, behavior: Behavior) -> tuple[PermissionRule, ...]:
        return tuple(r for r in self.rules if r.behavior == behavior)

    def sources(self) -> tuple[str, ...]:
        """The files read, highest precedence first, as shown to the user."""
        from toolrun.paths import display_path

        return tuple(display_path(f) for f in self.files)
