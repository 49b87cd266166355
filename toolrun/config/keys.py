"""Every key of a config file is known or reported (issue 13, point 1).

A typo in a settings file (``permissionz:``, a hook event ``PreToolUze:``) must never
switch a guard off silently. Keys are sorted into three kinds:

- keys toolrun enforces (the schema's own fields),
- Claude Code keys toolrun knows but does not enforce: listed by name, once,
- anything else: a located warning with a "did you mean" hint (an error when strict).

The walk is over the raw data (the schema ignores unknown keys), after the schema has
accepted the file, so every section here has the shape the schema expects.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolrun.errors import Problem

# The known keys (the fast path's shapes, not the schema's pydantic models) and the YAML
# helpers load with the first file checked: is_known_tool and tool_hint are used where no
# config file is read (rule self-tests).
if TYPE_CHECKING:
    from toolrun.yamlfile import Document, PathPart

#: Claude Code settings keys toolrun reads but does not act on (docs/settings).
CLAUDE_IGNORED_TOP = frozenset(
    {
        "apiKeyHelper", "attribution", "autoUpdatesChannel", "availableModels",
        "alwaysThinkingEnabled", "awsAuthRefresh", "awsCredentialExport", "cleanupPeriodDays",
        "companyAnnouncements", "disableAllHooks", "disabledMcpjsonServers",
        "enableAllProjectMcpServers", "enabledMcpjsonServers", "enabledPlugins", "env",
        "extraKnownMarketplaces", "fallbackModel", "feedbackSurveyRate", "fileSuggestion",
        "forceLoginMethod", "forceLoginOrgUUID", "includeCoAuthoredBy", "includeGitInstructions",
        "language", "model", "otelHeadersHelper", "outputStyle", "plansDirectory",
        "requiredMinimumVersion", "respectGitignore", "showTurnDuration", "spinnerTipsEnabled",
        "spinnerVerbs", "statusLine", "strictKnownMarketplaces", "allowedMcpServers",
        "deniedMcpServers", "terminalProgressBarEnabled", "theme", "verbose",
    }
)  # fmt: skip
#: Managed-only locks: enforced when they come from a managed settings file.
MANAGED_ONLY = frozenset({"allowManagedPermissionRulesOnly", "allowManagedHooksOnly"})
CLAUDE_IGNORED_PERMISSIONS = frozenset({"disableAutoMode"})
#: Claude Code's hook events (docs/hooks "Hook lifecycle"); toolrun runs those of
#: :data:`toolrun.hooks.models.HookEvent` and lists the others as ignored.
CLAUDE_HOOK_EVENTS = frozenset(
    {
        "PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse",
        "PostToolUseFailure", "PostToolBatch", "SessionStart", "Setup", "UserPromptSubmit",
        "UserPromptExpansion", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
        "PreCompact", "PostCompact", "SessionEnd", "Notification", "MessageDisplay",
        "TaskCreated", "TaskCompleted", "TeammateIdle", "InstructionsLoaded", "ConfigChange",
        "CwdChanged", "DirectoryAdded", "FileChanged", "WorktreeCreate", "WorktreeRemove",
        "Elicitation", "ElicitationResult",
    }
)  # fmt: skip
CLAUDE_IGNORED_HOOK_FIELDS = frozenset(
    {"statusMessage", "once", "async", "asyncRewake", "shell", "args"}
)
CLAUDE_IGNORED_SANDBOX = frozenset(
    {
        "enableWeakerNestedSandbox", "enableWeakerNetworkIsolation", "ignoreViolations",
        "httpProxyPort", "socksProxyPort",
    }
)  # fmt: skip
#: Claude Code's built-in tool names (docs/tools-reference; legacy names are rewritten by
#: the rule grammar). MCP tools (``mcp__...``, plugins' included) are known by prefix.
CLAUDE_TOOLS = frozenset(
    {
        "Agent", "ApplyPatch", "AskUserQuestion", "Bash", "BashOutput", "Edit",
        "EnterPlanMode", "ExitPlanMode", "Glob", "Grep", "LS", "LSP", "ListMcpResources",
        "MultiEdit", "NotebookEdit", "NotebookRead", "PowerShell", "Read", "ReadMcpResource",
        "Skill", "SlashCommand", "TaskCreate", "TaskGet", "TaskList", "TaskOutput",
        "TaskStop", "TaskUpdate", "TodoRead", "TodoWrite", "ToolSearch", "WebFetch",
        "WebSearch", "Write",
    }
)  # fmt: skip


def toolrun_hook_events() -> tuple[str, ...]:
    """The hook events toolrun runs: read from the one list (:mod:`toolrun.hooks.models`)."""
    from toolrun.hooks.models import HookEvent

    return typing.get_args(HookEvent)


def _fields(model: str) -> set[str]:
    """The keys the schema's ``model`` declares (aliases where set), without building it:
    the fast path's shapes declare the same keys (a test holds them equal)."""
    from toolrun.config.fastpath import SHAPES

    return set(SHAPES[model].keys)


@dataclass
class KeyReport:
    """What one file's walk found: warnings (located) and ignored Claude Code keys."""

    warnings: list[Problem] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def check_keys(data: Mapping[str, Any], doc: Document, *, managed: bool = False) -> KeyReport:
    """Report every key of ``data`` that toolrun does not know (see the module doc)."""
    from toolrun.validation import did_you_mean
    from toolrun.yamlfile import format_path

    report = KeyReport()

    def unknown(path: tuple[PathPart, ...], key: str, choices: Iterable[str], what: str) -> None:
        hint = did_you_mean(key, sorted(choices))
        report.warnings.append(
            Problem(
                doc.locate((*path, key)),
                format_path((*path, key)),
                f"unknown {what} {key!r}{hint}; it is not used",
            )
        )

    def section(
        value: Any,
        path: tuple[PathPart, ...],
        known: set[str],
        ignored: frozenset[str],
        what: str,
    ) -> None:
        if not isinstance(value, Mapping):
            return
        for key in value:
            key = str(key)
            if key in known:
                continue
            if key in ignored:
                report.ignored.append(key)
            else:
                unknown(path, key, known | ignored, what)

    top_known = (_fields("ConfigFile") - MANAGED_ONLY) | {"$schema"}  # an editor's hint
    if managed:
        top_known |= MANAGED_ONLY
    for key in data:
        key = str(key)
        if key in top_known:
            continue
        if key in MANAGED_ONLY:
            report.warnings.append(
                Problem(
                    doc.locate((key,)),
                    key,
                    f"{key} is only enforced in a managed settings file "
                    "(--managed-settings); here it is not used",
                )
            )
        elif key in CLAUDE_IGNORED_TOP:
            report.ignored.append(key)
        else:
            unknown((), key, top_known | CLAUDE_IGNORED_TOP | MANAGED_ONLY, "setting")
    section(
        data.get("permissions"),
        ("permissions",),
        _fields("PermissionsSection"),
        CLAUDE_IGNORED_PERMISSIONS,
        "permissions key",
    )
    _check_hooks(data.get("hooks"), report, section, unknown)
    _check_sandbox(data.get("sandbox"), section)
    return report


def _check_hooks(hooks: Any, report: KeyReport, section: Any, unknown: Any) -> None:
    if not isinstance(hooks, Mapping):
        return
    runs = set(toolrun_hook_events())
    for event, groups in hooks.items():
        event = str(event)
        if event not in runs:
            if event in CLAUDE_HOOK_EVENTS:
                report.ignored.append(f"hooks.{event}")
            else:
                unknown(("hooks",), event, runs | CLAUDE_HOOK_EVENTS, "hook event")
            continue
        for g, group in enumerate(groups if isinstance(groups, Sequence) else ()):
            path: tuple[PathPart, ...] = ("hooks", event, g)
            section(group, path, _fields("HookMatcherSpec"), frozenset(), "hook matcher field")
            handlers = group.get("hooks") if isinstance(group, Mapping) else None
            for h, handler in enumerate(handlers if isinstance(handlers, Sequence) else ()):
                section(
                    handler,
                    (*path, "hooks", h),
                    _fields("HookCommandSpec"),
                    CLAUDE_IGNORED_HOOK_FIELDS,
                    "hook field",
                )


def _check_sandbox(sandbox: Any, section: Any) -> None:
    if not isinstance(sandbox, Mapping):
        return
    ignored = CLAUDE_IGNORED_SANDBOX
    section(sandbox, ("sandbox",), _fields("SandboxSection"), ignored, "sandbox key")
    for key, model in (
        ("filesystem", "SandboxFilesystemSection"),
        ("network", "SandboxNetworkSection"),
        ("credentials", "SandboxCredentialsSection"),
    ):
        section(sandbox.get(key), ("sandbox", key), _fields(model), ignored, "sandbox key")


def is_known_tool(name: str) -> bool:
    """A tool a rule may name: Claude Code's, an MCP or plugin tool, or a registered one."""
    if name in CLAUDE_TOOLS or name.startswith("mcp__"):
        return True
    from toolrun.tools import default_registry  # only for names outside the usual set

    return name in default_registry()


def tool_hint(name: str) -> str:
    from toolrun.tools import default_registry
    from toolrun.validation import did_you_mean

    return did_you_mean(name, sorted(CLAUDE_TOOLS | set(default_registry().names())))
