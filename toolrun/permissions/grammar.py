"""Permission rule grammar: ``Tool`` or ``Tool(content)``, as Claude Code writes them.

``parse_rule`` turns the text of one rule into a :class:`ParsedRule` or raises
:class:`RuleSyntaxError` with a message meant for a ``file:line: message`` report.
Nothing here knows about files, the workspace or the filesystem.

- The content runs from the first unescaped ``(`` to the final ``)``; ``\\(``, ``\\)``
  and ``\\\\`` are escapes (other backslashes are kept for the content's own syntax,
  e.g. ``\\*`` in a Bash pattern).
- ``Tool(*)`` and ``Tool()`` are the same rule as ``Tool``.
- Legacy tool names are rewritten (``Task`` → ``Agent`` ...).
- Tool-name globs (``*``, ``mcp__*``) are for deny and ask rules; an allow rule may
  use a glob only after a literal ``mcp__<server>__`` prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ContentKind = Literal["tool", "bash", "path", "domain", "param", "opaque"]

LEGACY_TOOL_NAMES: dict[str, str] = {
    "Task": "Agent",
    "KillShell": "TaskStop",
    "BashOutputTool": "TaskOutput",
    "AgentOutputTool": "TaskOutput",
}

#: Tools whose rule content is a gitignore-style path pattern.
READ_FAMILY: frozenset[str] = frozenset({"Read", "Glob", "Grep", "LS"})
EDIT_FAMILY: frozenset[str] = frozenset(
    {"Edit", "Write", "MultiEdit", "ApplyPatch", "NotebookEdit"}
)
PATH_TOOLS: frozenset[str] = READ_FAMILY | EDIT_FAMILY

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_NAME_GLOB = re.compile(r"[A-Za-z0-9_.\-*?]+")
_MCP_SERVER_PREFIX = re.compile(r"mcp__[A-Za-z0-9_.\-]+?__")
_PARAM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(.+)", re.DOTALL)
_DOMAIN = re.compile(r"[a-z0-9*\-]+(\.[a-z0-9*\-]+)*|\[[0-9a-f:.]+\]")
_PRIMARY_FIELDS = frozenset({"command", "file_path", "path", "notebook_path", "url"})


class RuleSyntaxError(ValueError):
    """A permission rule that cannot be used; the message says why and how to fix it."""


@dataclass(frozen=True, slots=True)
class ParsedRule:
    """One rule, parsed. ``content`` is None for tool-wide rules (``Tool``, ``Tool(*)``)."""

    text: str
    tool: str
    content: str | None
    kind: ContentKind
    tool_glob: bool = False

    @property
    def is_tool_wide(self) -> bool:
        return self.content is None


def _find_unescaped(text: str, char: str) -> int:
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == char:
            return i
        i += 1
    return -1


def _unescape_content(content: str) -> str:
    out: list[str] = []
    i = 0
    depth = 0
    while i < len(content):
        c = content[i]
        if c == "\\" and i + 1 < len(content) and content[i + 1] in "()\\":
            out.append(content[i + 1])
            i += 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise RuleSyntaxError(
                    "unbalanced ')' inside the rule content; write \\) for a literal parenthesis"
                )
        out.append(c)
        i += 1
    if depth != 0:
        raise RuleSyntaxError(
            "unbalanced '(' inside the rule content; write \\( for a literal parenthesis"
        )
    return "".join(out)


def _split(text: str) -> tuple[str, str | None]:
    open_at = _find_unescaped(text, "(")
    if open_at < 0:
        if _find_unescaped(text, ")") >= 0:
            raise RuleSyntaxError("')' without a matching '('")
        return text, None
    if not text.endswith(")") or (len(text) >= 2 and _ends_with_escaped_paren(text)):
        raise RuleSyntaxError(
            "a rule with content must end with ')': write Tool(content), "
            "escaping literal parentheses as \\( and \\)"
        )
    return text[:open_at], text[open_at + 1 : -1]


def _ends_with_escaped_paren(text: str) -> bool:
    """True when the final ``)`` is escaped (an odd number of backslashes before it)."""
    backslashes = 0
    i = len(text) - 2
    while i >= 0 and text[i] == "\\":
        backslashes += 1
        i -= 1
    return backslashes % 2 == 1


def _check_tool_name(tool: str, behavior: str | None) -> bool:
    """Validate the tool name; returns True when it is a glob."""
    if not tool:
        raise RuleSyntaxError("missing tool name before '('")
    if tool.strip() != tool or any(c.isspace() for c in tool):
        raise RuleSyntaxError(f"invalid tool name {tool!r}: tool names contain no spaces")
    if _NAME.fullmatch(tool):
        return False
    if not _NAME_GLOB.fullmatch(tool) or not any(c in "*?" for c in tool):
        raise RuleSyntaxError(
            f"invalid tool name {tool!r}: use letters, digits, '_', '-', '.', "
            "and '*' or '?' for a tool-name glob in deny/ask rules"
        )
    if behavior == "allow":
        prefix = _MCP_SERVER_PREFIX.match(tool)
        if prefix is None or any(c in "*?" for c in tool[: prefix.end()]):
            raise RuleSyntaxError(
                f"tool-name glob {tool!r} is only allowed in deny and ask rules "
                "(an allow rule may glob only after a literal mcp__<server>__ prefix)"
            )
    return True


def _content_kind(tool: str, tool_glob: bool, content: str, behavior: str | None) -> ContentKind:
    if tool_glob:
        raise RuleSyntaxError(f"a tool-name glob ({tool}) takes no content")
    if tool.startswith("mcp__") and _PARAM.fullmatch(content) is None:
        raise RuleSyntaxError(
            f"MCP rules take no content (except param:value in deny/ask rules): write {tool} "
            "(or mcp__<server>__<tool>)"
        )
    if tool == "Bash":
        _check_bash_pattern(content)
        return "bash"
    if tool in PATH_TOOLS:
        _check_path_pattern(content)
        return "path"
    if tool == "WebFetch":
        _check_domain(content)
        return "domain"
    param = _PARAM.fullmatch(content)
    if param is not None:
        if param.group(1) in _PRIMARY_FIELDS:
            raise RuleSyntaxError(
                f"{param.group(1)}:... cannot match a tool's primary field; "
                "use the tool's own rule form instead"
            )
        if behavior == "allow":
            raise RuleSyntaxError("param:value rules are only allowed in deny and ask rules")
        return "param"
    return "opaque"


def _check_bash_pattern(content: str) -> None:
    body = content.removesuffix(":*")
    if not body.strip():
        raise RuleSyntaxError(
            "empty command prefix before ':*'; write Bash for every command"
        )
    if "\x00" in content:
        raise RuleSyntaxError("NUL character in a Bash pattern")


def _check_path_pattern(content: str) -> None:
    if "\x00" in content:
        raise RuleSyntaxError("NUL character in a path pattern")
    if not content.strip():
        raise RuleSyntaxError("empty path pattern")
    if content.startswith("~") and not (content == "~" or content.startswith("~/")):
        raise RuleSyntaxError(
            f"{content!r}: only '~/' (the home directory) is supported, not '~user'"
        )
    depth = 0
    for c in content:
        if c == "[":
            depth += 1
        elif c == "]" and depth:
            depth -= 1
    if depth:
        raise RuleSyntaxError(f"{content!r}: unclosed '[' in a path pattern")


def _check_domain(content: str) -> None:
    if not content.startswith("domain:"):
        raise RuleSyntaxError(
            "WebFetch rules take domain:HOST, e.g. WebFetch(domain:example.com)"
        )
    host = content[len("domain:") :].strip().lower().rstrip(".")
    if not host:
        raise RuleSyntaxError("WebFetch(domain:) needs a host name")
    if host != "*" and not _DOMAIN.fullmatch(host):
        raise RuleSyntaxError(
            f"invalid domain {host!r}: use a host name such as example.com or *.example.com"
        )


def parse_rule(text: str, *, behavior: str | None = None) -> ParsedRule:
    """Parse one permission rule.

    ``behavior`` ("allow" | "ask" | "deny"), when given, enables the checks that
    depend on it (tool-name globs and ``param:value`` are deny/ask only).
    """
    if not isinstance(text, str):
        raise RuleSyntaxError(f"a rule must be a string, not {type(text).__name__}")
    try:
        return _parse(text, behavior)
    except RuleSyntaxError as exc:
        raise RuleSyntaxError(f"{text.strip()!r}: {exc}") from None


def _parse(text: str, behavior: str | None) -> ParsedRule:
    stripped = text.strip()
    if not stripped:
        raise RuleSyntaxError("empty rule")
    if ("\n" in stripped or "\r" in stripped) and _find_unescaped(stripped, "(") < 0:
        raise RuleSyntaxError("a rule is one line")
    raw_tool, raw_content = _split(stripped)
    tool = LEGACY_TOOL_NAMES.get(raw_tool, raw_tool)
    tool_glob = _check_tool_name(tool, behavior)
    if raw_content is None:
        return ParsedRule(stripped, tool, None, "tool", tool_glob)
    content = _unescape_content(raw_content)
    if content in ("", "*"):
        return ParsedRule(stripped, tool, None, "tool", tool_glob)
    if tool == "WebFetch" and content.strip().lower() == "domain:*":
        return ParsedRule(stripped, tool, None, "tool", tool_glob)
    kind = _content_kind(tool, tool_glob, content, behavior)
    return ParsedRule(stripped, tool, content, kind, tool_glob)
