"""Every key of a config file is known or reported (issues 13 and 26).

A typo in a settings file (``permissionz:``, a hook event ``PreToolUze:``) must never
switch a guard off silently. With every key of Claude Code's settings reference in one
table (:mod:`toolrun.config.claude_keys`), keys are sorted into these kinds:

- keys toolrun enforces (the schema's own fields);
- Claude Code keys toolrun knows and that cannot loosen a check when ignored: listed by
  name, once ("ignored: ...");
- Claude Code keys that restrict and that toolrun does not enforce: a loud located
  warning ("NOT ENFORCED"), an error when strict;
- anything else is a typo: under ``permissions`` or ``sandbox``, a key one edit from a
  known one (or the "did you mean" match) is a located error (``deney``: the deny list
  would be gone); elsewhere a located warning with the hint (an error when strict).

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

#: The security sections: a key in them one edit from a known key is an error (a misspelt
#: ``deny`` would drop its rules silently), not a warning.
SECURITY_SECTIONS = ("permissions", "sandbox")
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
    {"statusMessage", "once", "asyncRewake", "shell", "args"}
)
#: Claude Code's built-in tool names (docs/tools-reference; legacy names are rewritten by
#: the rule grammar). MCP tools (``mcp__...``, plugins' included) are known by prefix.
CLAUDE_TOOLS = frozenset(
    {
        "Agent", "ApplyPatch", "Artifact", "AskUserQuestion", "Bash", "BashOutput", "Edit",
        "EndConversation", "EnterPlanMode", "EnterWorktree", "ExitPlanMode", "ExitWorktree",
        "Glob", "Grep", "LS", "LSP", "ListMcpResources", "ListMcpResourcesTool", "Monitor",
        "MultiEdit", "NotebookEdit", "NotebookRead", "PowerShell", "Read", "ReadMcpResource",
        "ReadMcpResourceTool", "SendMessage", "Skill", "SlashCommand", "TaskCreate", "TaskGet",
        "TaskList", "TaskOutput", "TaskStop", "TaskUpdate", "TodoRead", "TodoWrite",
        "ToolSearch", "WebFetch", "WebSearch", "Workflow", "Write",
        "CronCreate", "CronDelete", "CronList",
        # ``Cd(path)`` gates Claude Code's /cd command (docs/permissions): it loads, and no
        # recorded tool call is ever a Cd call
        "Cd",
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
    """What one file's walk found: warnings and errors (located) and ignored Claude Code
    keys; ``restricting`` are the loud warnings for keys that restrict Claude Code and that
    toolrun does not enforce (errors under ``--strict``, as every warning is)."""

    warnings: list[Problem] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    errors: list[Problem] = field(default_factory=list)
    restricting: list[Problem] = field(default_factory=list)


def one_edit(a: str, b: str) -> bool:
    """Damerau-Levenshtein distance 1: one letter changed, added, dropped or two
    neighbours swapped (``deney``, ``alow``, ``defualtMode``)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[i:] == long[i + 1 :]


def near_miss(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the known key ``word`` most likely misspells, or ""."""
    from toolrun.validation import did_you_mean

    options = sorted(choices)
    hint = did_you_mean(word, options)
    if hint:
        return hint
    close = [c for c in options if one_edit(word.lower(), c.lower())]
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_keys(data: Mapping[str, Any], doc: Document, *, managed: bool = False) -> KeyReport:
    """Report every key of ``data`` that toolrun does not know (see the module doc)."""
    from toolrun.config import claude_keys
    from toolrun.yamlfile import format_path

    report = KeyReport()

    def unknown(path: tuple[PathPart, ...], key: str, choices: Iterable[str], what: str) -> None:
        hint = near_miss(key, choices)
        where = doc.locate((*path, key))
        shown = format_path((*path, key))
        if hint and path[:1] and path[0] in SECURITY_SECTIONS:
            # a near miss of a security key: its rules or limits would be silently gone
            report.errors.append(
                Problem(where, shown, f"unknown {what} {key!r}{hint}; a misspelt "
                        f"{path[0]} key is an error: what it sets would be silently lost")
            )
            return
        report.warnings.append(Problem(where, shown, f"unknown {what} {key!r}{hint}; it is not used"))

    def managed_only(path: tuple[PathPart, ...], key: str) -> None:
        report.warnings.append(
            Problem(
                doc.locate((*path, key)),
                format_path((*path, key)),
                f"{key} is only enforced in a managed settings file "
                "(--managed-settings); here it is not used",
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
        dotted = ".".join(str(p) for p in path)
        documented = claude_keys.children(dotted, "enforced") if dotted in _WALKED else frozenset()
        restricting = claude_keys.children(dotted, "restricting")
        for key in value:
            key = str(key)
            full = f"{dotted}.{key}" if dotted else key
            if full in claude_keys.MANAGED_ONLY and not managed:
                managed_only(path, key)
            elif key in known:
                continue
            elif key in restricting:
                report.restricting.append(
                    Problem(
                        doc.locate((*path, key)),
                        format_path((*path, key)),
                        f"warning: NOT ENFORCED: {full} restricts Claude Code "
                        f"({claude_keys.RESTRICTING[full]}) and toolrun does not enforce it, "
                        "so this check is looser than Claude Code (an error with --strict)",
                    )
                )
            elif key in ignored:
                report.ignored.append(full)
            else:
                unknown(path, key, known | ignored | restricting | documented, what)

    top_known = _fields("ConfigFile") | {"$schema"}  # an editor's hint
    section(data, (), top_known, claude_keys.children("", "ignored"), "setting")
    section(
        data.get("permissions"),
        ("permissions",),
        _fields("PermissionsSection"),
        claude_keys.children("permissions", "ignored"),
        "permissions key",
    )
    _check_hooks(data.get("hooks"), report, section, unknown)
    _check_sandbox(data.get("sandbox"), section)
    return report


#: the sections :func:`check_keys` walks key by key
_WALKED = frozenset(
    {"", "permissions", "sandbox", "sandbox.filesystem", "sandbox.network", "sandbox.credentials"}
)


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
    from toolrun.config.claude_keys import children

    section(sandbox, ("sandbox",), _fields("SandboxSection"), children("sandbox", "ignored"),
            "sandbox key")
    for key, model in (
        ("filesystem", "SandboxFilesystemSection"),
        ("network", "SandboxNetworkSection"),
        ("credentials", "SandboxCredentialsSection"),
    ):
        section(
            sandbox.get(key),
            ("sandbox", key),
            _fields(model),
            children(f"sandbox.{key}", "ignored"),
            "sandbox key",
        )


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
