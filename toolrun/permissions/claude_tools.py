"""Claude Code's own tools that toolrun does not run, decided as Claude Code decides them.

Transcripts name tools such as TodoWrite or Agent. toolrun cannot run them, but a check
must decide them as Claude Code would: the tools its reference lists with "Permission
required: No" need no rule (deny and ask rules still apply first); the others ask unless
a rule allows them. The file tools (Read, Glob, Grep, LS, NotebookRead, Edit, Write,
NotebookEdit, ...) are decided on their paths by the engine (``PATH_FIELDS``), WebFetch on
its URL's domain; WebSearch has no URL, so only a ``WebSearch`` rule decides it.

Source: Claude Code docs, "Tools reference" (code.claude.com/docs/en/tools-reference), the
"Permission required" column, as mirrored on 2026-12-01 (EndConversation, Monitor and
Workflow added); legacy names from the rule parser (``Task`` is ``Agent``). Every name here
is also a known rule name (:data:`toolrun.config.keys.CLAUDE_TOOLS`, a test holds it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from toolrun.permissions.grammar import LEGACY_TOOL_NAMES
from toolrun.permissions.readonly import ReadOnly
from toolrun.permissions.rules import Family, Subject

Need = Literal["none", "ask", "user"]


@dataclass(frozen=True, slots=True)
class ClaudeTool:
    """One of Claude Code's own tools, as a transcript names it: what permission it needs
    and what kind of effect it has."""

    name: str  # the canonical name rules and hooks match
    need: Need  # none: no permission; ask: a rule must allow it; user: it asks the user
    effect: Literal["read", "write", "execute", "network"]


_TABLE: Final = (
    # no permission required
    ClaudeTool("Agent", "none", "read"),
    ClaudeTool("CronCreate", "none", "read"),
    ClaudeTool("CronDelete", "none", "read"),
    ClaudeTool("CronList", "none", "read"),
    # ends the session (v2.1.213+); PreToolUse does not run for it in Claude Code
    ClaudeTool("EndConversation", "none", "read"),
    ClaudeTool("EnterPlanMode", "none", "read"),
    ClaudeTool("EnterWorktree", "none", "read"),
    ClaudeTool("ExitWorktree", "none", "read"),
    ClaudeTool("ListMcpResourcesTool", "none", "read"),
    ClaudeTool("LSP", "none", "read"),
    ClaudeTool("ReadMcpResourceTool", "none", "read"),
    ClaudeTool("SendMessage", "none", "read"),
    ClaudeTool("TaskCreate", "none", "read"),
    ClaudeTool("TaskGet", "none", "read"),
    ClaudeTool("TaskList", "none", "read"),
    ClaudeTool("TaskOutput", "none", "read"),
    ClaudeTool("TaskStop", "none", "read"),
    ClaudeTool("TaskUpdate", "none", "read"),
    ClaudeTool("TodoWrite", "none", "read"),
    ClaudeTool("TodoRead", "none", "read"),
    ClaudeTool("ToolSearch", "none", "read"),
    # it needs no rule, but it is a question to the user: it waits for one (and dontAsk
    # denies it), so a check reports it as asking
    ClaudeTool("AskUserQuestion", "user", "read"),
    # permission required, no path or URL to decide on: a rule names the tool
    ClaudeTool("WebSearch", "ask", "network"),
    ClaudeTool("ExitPlanMode", "ask", "execute"),
    ClaudeTool("Skill", "ask", "execute"),
    ClaudeTool("PowerShell", "ask", "execute"),
    # runs a command in the background (v2.1.98+) / a dynamic workflow of subagents
    ClaudeTool("Monitor", "ask", "execute"),
    ClaudeTool("Workflow", "ask", "execute"),
    ClaudeTool("Artifact", "ask", "network"),
)
TOOLS: Final = {t.name: t for t in _TABLE}
#: Legacy names Claude Code rewrites before matching rules (the rule parser's, and the
#: BashOutput tool of older transcripts).
ALIASES: Final = {**LEGACY_TOOL_NAMES, "BashOutput": "TaskOutput"}
#: File tools decided on a path like their families (field, family, required).
PATH_FIELDS: Final[dict[str, tuple[str, Family, bool]]] = {
    "NotebookRead": ("notebook_path", "read", True),
}


def claude_tool(name: str) -> ClaudeTool | None:
    """The table's entry for ``name`` (a legacy name gives its canonical entry)."""
    return TOOLS.get(ALIASES.get(name, name))


def subject(tool: ClaudeTool, params: Mapping[str, Any]) -> tuple[Subject, dict[str, Any]]:
    """What the engine decides for a call of ``tool``, and how (the resolver's verdict
    keywords): a tool needing no permission is allowed once no deny or ask rule matches."""
    s = Subject("tool", tool.name, tool.name, tool.effect, what="tool", params=params)
    if tool.need == "none":
        why = f"Claude Code's {tool.name} needs no permission (docs: tools reference)"
        return s, {"readonly": ReadOnly(True, why)}
    return s, {}
