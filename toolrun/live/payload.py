"""What an agent's hook sends on stdin, read into one call for the engine.

Claude Code (docs/hooks, "PreToolUse input", "PermissionRequest input"): ``session_id``,
``transcript_path``, ``cwd``, ``permission_mode``, ``hook_event_name``, ``tool_name``,
``tool_input`` and (PreToolUse only) ``tool_use_id``. Its tool names and input fields are
toolrun's own, so the call is decided as it comes.

Gemini CLI (docs/hooks/reference, "BeforeTool"): ``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name: BeforeTool``, ``timestamp``, ``tool_name``, ``tool_input``,
no permission mode. Its built-in tools have names and fields of their own
(``run_shell_command``, ``read_file``, ...): each is decided as the Claude Code tool that
does the same (:data:`GEMINI_TOOLS`); MCP tools share Claude Code's
``mcp__server__tool`` names. A Gemini tool toolrun does not know is decided under its own
name, which no rule allows unless it names it: it asks.

Only the standard library here: this runs on every tool call of a session.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from toolrun.errors import HookInputError

Protocol = Literal["claude", "gemini"]
#: the events a decision answers, per protocol
EVENTS: Final = {"PreToolUse": "claude", "PermissionRequest": "claude", "BeforeTool": "gemini"}
#: Claude Code's modes toolrun's engine has under another name (``manual`` is an alias
#: of ``default`` from v2.1.200; ``auto``, the classifier mode, is decided as ``default``,
#: as toolrun decides it everywhere: it runs no classifier)
MODE_ALIASES: Final = {"manual": "default", "auto": "default"}
ENGINE_MODES: Final = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")

Call = tuple[str, Mapping[str, Any]]
#: the event that ends a session: its run gets its end record (both agents name it so)
SESSION_END: Final = "SessionEnd"
#: the event that starts one: the warm server is started and the config loaded, so that
#: the session's first tool call is answered warm (both agents name it so)
SESSION_START: Final = "SessionStart"


@dataclass(frozen=True, slots=True)
class HookCall:
    """One tool call as an agent's hook announced it, and the calls toolrun decides."""

    protocol: Protocol
    event: str
    tool: str  # as the agent named it
    input: Mapping[str, Any]
    #: what the engine decides, in toolrun's names (several for a Gemini ``web_fetch``
    #: whose prompt names several URLs: the strictest decision stands)
    calls: tuple[Call, ...]
    session_id: str
    tool_use_id: str | None
    cwd: str | None
    #: the engine's mode (None: the config's); ``mode_note`` says when it was mapped
    mode: str | None
    mode_note: str | None = None
    transcript_path: str | None = None
    #: the ``permission_mode`` as the agent sent it
    agent_mode: str | None = None


@dataclass(frozen=True, slots=True)
class SessionEnded:
    """A ``SessionEnd`` payload: the session's run is over."""

    protocol: Protocol
    session_id: str
    cwd: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class SessionStarted:
    """A ``SessionStart`` payload: nothing to decide; the engine gets ready."""

    protocol: Protocol
    session_id: str
    cwd: str | None


def _str_field(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise HookInputError(f"toolrun hook: {key} must be a string, not {type(value).__name__}")
    return value


def _mode(raw: str | None) -> tuple[str | None, str | None]:
    """The engine's mode for the agent's ``permission_mode``, and a note when it differs.

    A mode toolrun does not know is decided as ``default`` (which asks for everything no
    rule or the read-only set allows): never as a looser one.
    """
    if raw is None:
        return None, None
    if raw in ENGINE_MODES:
        return raw, None
    if raw in MODE_ALIASES:
        return MODE_ALIASES[raw], f"permission_mode {raw} decided as {MODE_ALIASES[raw]}"
    return "default", f"unknown permission_mode {raw!r} decided as default"


def parse_payload(
    raw: bytes, protocol: Protocol | None = None
) -> HookCall | SessionEnded | SessionStarted:
    """The call of one hook payload; HookInputError says what is wrong with it.

    ``protocol`` None: Gemini CLI when ``hook_event_name`` is ``BeforeTool``, else
    Claude Code.
    """
    if not raw.strip():
        raise HookInputError("toolrun hook: stdin is empty: expected the hook's JSON payload")
    try:
        # decoded here: json.loads of bytes would take a UTF-16 or UTF-32 text too
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise HookInputError("toolrun hook: stdin is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise HookInputError(
            f"toolrun hook: stdin is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise HookInputError("toolrun hook: stdin is JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise HookInputError(
            f"toolrun hook: the payload must be a JSON object, not {type(data).__name__}"
        )
    event = _str_field(data, "hook_event_name")
    if protocol is None:
        protocol = "gemini" if event == "BeforeTool" else "claude"
    if event is None:
        event = "BeforeTool" if protocol == "gemini" else "PreToolUse"
    if event == SESSION_END:
        return SessionEnded(
            protocol,
            _str_field(data, "session_id") or "",
            _str_field(data, "cwd"),
            _str_field(data, "reason"),
        )
    if event == SESSION_START:
        return SessionStarted(
            protocol, _str_field(data, "session_id") or "", _str_field(data, "cwd")
        )
    if EVENTS.get(event) != protocol:
        wanted = ", ".join(
            [*(e for e, p in EVENTS.items() if p == protocol), SESSION_START, SESSION_END]
        )
        raise HookInputError(
            f"toolrun hook: hook_event_name {event!r} is not a tool event it answers "
            f"({wanted}); register it under those events only"
        )
    tool = _str_field(data, "tool_name")
    if not tool:
        raise HookInputError("toolrun hook: the payload has no tool_name")
    tool_input = data.get("tool_input", {})
    if not isinstance(tool_input, dict):
        raise HookInputError(
            f"toolrun hook: tool_input must be an object, not {type(tool_input).__name__}"
        )
    agent_mode = _str_field(data, "permission_mode")
    mode, note = _mode(agent_mode)
    calls = gemini_calls(tool, tool_input) if protocol == "gemini" else ((tool, tool_input),)
    return HookCall(
        protocol=protocol,
        event=event,
        tool=tool,
        input=tool_input,
        calls=calls,
        session_id=_str_field(data, "session_id") or "",
        tool_use_id=_str_field(data, "tool_use_id"),
        cwd=_str_field(data, "cwd"),
        mode=mode,
        mode_note=note,
        transcript_path=_str_field(data, "transcript_path"),
        agent_mode=agent_mode,
    )


# --------------------------------------------------------------------------- Gemini

#: Gemini CLI's built-in tool -> (the Claude Code tool that does the same, {its field:
#: Gemini's fields for it, first present wins}). Field names changed across Gemini CLI
#: versions (``absolute_path`` -> ``file_path``, ``path`` -> ``dir_path``): both are read.
GEMINI_TOOLS: Final[Mapping[str, tuple[str, Mapping[str, tuple[str, ...]]]]] = {
    "run_shell_command": ("Bash", {"command": ("command",)}),
    "read_file": ("Read", {"file_path": ("file_path", "absolute_path", "path")}),
    "write_file": ("Write", {"file_path": ("file_path", "absolute_path"), "content": ("content",)}),
    "replace": (
        "Edit",
        {
            "file_path": ("file_path", "absolute_path"),
            "old_string": ("old_string",),
            "new_string": ("new_string",),
        },
    ),
    "glob": ("Glob", {"pattern": ("pattern",), "path": ("dir_path", "path")}),
    "search_file_content": ("Grep", {"pattern": ("pattern",), "path": ("dir_path", "path")}),
    "grep_search": ("Grep", {"pattern": ("pattern",), "path": ("dir_path", "path")}),
    "list_directory": ("LS", {"path": ("dir_path", "path")}),
    "google_web_search": ("WebSearch", {"query": ("query",)}),
}
_URL: Final = re.compile(r"https?://[^\s<>\"'`)\]]+", re.IGNORECASE)


def _mapped(tool: str, fields: Mapping[str, tuple[str, ...]], given: Mapping[str, Any]) -> Call:
    out: dict[str, Any] = {}
    for field, names in fields.items():
        for name in names:
            if name in given:
                out[field] = given[name]
                break
    # a shell command's ``directory`` is where it runs: not an input field of toolrun's
    # Bash, it becomes the call's cwd (:func:`gemini_cwd`)
    return tool, out


def gemini_calls(tool: str, given: Mapping[str, Any]) -> tuple[Call, ...]:
    """The toolrun calls a Gemini CLI tool call is decided as."""
    if tool == "web_fetch":
        # its prompt carries the URLs (up to 20): each is a fetch
        prompt = given.get("prompt")
        urls = _URL.findall(prompt) if isinstance(prompt, str) else []
        if not urls:
            return (("WebFetch", {}),)  # no URL toolrun can see: asks unless a rule allows it
        return tuple(("WebFetch", {"url": url.rstrip(".,;:")}) for url in dict.fromkeys(urls))
    known = GEMINI_TOOLS.get(tool)
    if known is None:
        return ((tool, dict(given)),)
    return (_mapped(known[0], known[1], given),)


def gemini_cwd(tool: str, given: Mapping[str, Any], cwd: str | None) -> str | None:
    """Where a Gemini shell command runs: its ``directory`` (relative to ``cwd``), if set."""
    directory = given.get("directory") if tool == "run_shell_command" else None
    if not isinstance(directory, str) or not directory:
        return cwd
    if directory.startswith("/") or cwd is None:
        return directory
    return f"{cwd.rstrip('/')}/{directory}"
