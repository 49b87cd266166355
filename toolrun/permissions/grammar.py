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
  use a glob only after a literal ``mcp__<server>__`` prefix. Any other allow glob is
  *ignored* with a warning, as Claude Code skips it (it approves nothing).
- ``Tool(param:value)`` matches a top-level input field in deny and ask rules, for any
  tool: for a built-in tool the name must be one of its input fields (``Bash(timeout:*)``,
  ``Bash(run_in_background:true)``), so ``Bash(npm:*)`` stays a command prefix. A rule
  on a tool's primary field (``Bash(command:rm *)``) is an error in deny/ask (Claude Code
  ignores it, which would silently drop a deny) and ignored with a warning in allow, as is
  any ``param:value`` allow rule (a parameter never proves a call safe).
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
READ_FAMILY: frozenset[str] = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
EDIT_FAMILY: frozenset[str] = frozenset(
    {"Edit", "Write", "MultiEdit", "ApplyPatch", "NotebookEdit"}
)
PATH_TOOLS: frozenset[str] = READ_FAMILY | EDIT_FAMILY

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_NAME_GLOB = re.compile(r"[A-Za-z0-9_.\-*?]+")
_MCP_SERVER_PREFIX = re.compile(r"mcp__[A-Za-z0-9_.\-]+?__")
_PARAM = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(\S.*?)\s*", re.DOTALL)
_DOMAIN = re.compile(r"[a-z0-9*\-]+(\.[a-z0-9*\-]+)*|\[[0-9a-f:.]+\]")

#: The field a built-in tool's own rule form is about: never matched as ``param:value``.
PRIMARY_FIELDS: dict[str, str] = {
    "Bash": "command",
    "PowerShell": "command",
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "Glob": "path",
    "Grep": "path",
    "LS": "path",
    "WebFetch": "url",
    "ApplyPatch": "patch",
}
#: The other input fields of built-in tools (Claude Code's names and toolrun's own):
#: ``Tool(name:value)`` with one of these is a parameter rule, anything else keeps the
#: tool's own content form.
TOOL_PARAMS: dict[str, frozenset[str]] = {
    "Bash": frozenset({"timeout", "description", "run_in_background", "dangerouslyDisableSandbox"}),
    "Read": frozenset({"offset", "limit", "pages"}),
    "Write": frozenset({"content"}),
    "Edit": frozenset({"old_string", "new_string", "replace_all"}),
    "MultiEdit": frozenset({"edits"}),
    "NotebookEdit": frozenset({"cell_id", "new_source", "cell_type", "edit_mode"}),
    "Glob": frozenset({"pattern"}),
    "Grep": frozenset(
        {
            "pattern", "glob", "type", "output_mode", "head_limit", "offset", "multiline",
            "case_insensitive", "line_numbers", "after", "before", "context",
        }
    ),
    "LS": frozenset({"ignore"}),
    "WebFetch": frozenset({"prompt"}),
    "ApplyPatch": frozenset(),
}


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
    #: a rule Claude Code skips (it never matches anything): loaded, warned about, unused
    ignored: bool = False
    #: what the loader warns about this rule (why it is ignored, or how it is read)
    warning: str = ""

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


def _check_tool_name(tool: str) -> bool:
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
    return True


def _unanchored_allow_glob(tool: str) -> bool:
    """An allow glob not behind a literal ``mcp__<server>__`` prefix (Claude Code skips it)."""
    prefix = _MCP_SERVER_PREFIX.match(tool)
    return prefix is None or any(c in "*?" for c in tool[: prefix.end()])


def _param(tool: str, content: str) -> tuple[str, str] | None:
    """(name, value) when ``content`` is a ``param:value`` rule for ``tool``, else None."""
    found = _PARAM.fullmatch(content)
    if found is None:
        return None
    name = found.group(1)
    known = TOOL_PARAMS.get(tool)
    if known is not None and name not in known and name != PRIMARY_FIELDS.get(tool):
        return None  # a built-in tool's own content form (Bash(npm:*), Read(C:x), ...)
    if tool == "Bash" and content == f"{name}:*":
        return None  # the legacy prefix form: Bash(timeout:*) is the command `timeout ...`
    return name, found.group(2)


def _content_kind(
    tool: str, content: str, behavior: str | None
) -> tuple[ContentKind, str, bool, str]:
    """(kind, content, ignored, warning) of a rule's content."""
    param = _param(tool, content)
    if param is not None:
        name, value = param
        if name == PRIMARY_FIELDS.get(tool):
            own = {"Bash": "Bash(rm *)", "WebFetch": "WebFetch(domain:HOST)"}.get(
                tool, f"{tool}(path)"
            )
            if behavior == "allow":
                return "opaque", content, True, (
                    f"{name}:... cannot match {tool}'s primary field; ignored "
                    f"(as Claude Code does): write {own}"
                )
            raise RuleSyntaxError(
                f"{name}:... cannot match {tool}'s primary field (Claude Code ignores such a "
                f"rule, which would drop this {behavior or 'rule'}): write {own}"
            )
        if behavior == "allow":
            return "param", f"{name}:{value}", True, (
                "param:value rules match only in deny and ask rules (a parameter never "
                "shows that a call is safe); this allow rule is ignored"
            )
        return "param", f"{name}:{value}", False, ""
    if tool.startswith("mcp__"):
        raise RuleSyntaxError(
            f"MCP rules take no content (except param:value in deny/ask rules): write {tool} "
            "(or mcp__<server>__<tool>)"
        )
    if tool == "Bash":
        _check_bash_pattern(content)
        return "bash", content, False, _bash_param_lookalike(content)
    if tool in PATH_TOOLS:
        _check_path_pattern(content)
        return "path", content, False, ""
    if tool == "WebFetch":
        _check_domain(content)
        return "domain", content, False, ""
    return "opaque", content, False, ""


def _bash_param_lookalike(content: str) -> str:
    """A warning for ``Bash(name:value)`` that is read as a command pattern."""
    found = _PARAM.fullmatch(content)
    if found is None or " " in content.strip():
        return ""
    name = found.group(1)
    if name in TOOL_PARAMS["Bash"]:  # Bash(timeout:*): see _param
        return (
            f"read as the command prefix {name!r} (legacy ':*' form); for the {name} "
            f"parameter write Bash({name}: *)"
        )
    if found.group(2) == "*":
        return ""
    fields = ", ".join(sorted(TOOL_PARAMS["Bash"]))
    return (
        f"read as the command pattern {content!r}: {found.group(1)!r} is not a Bash input "
        f"field ({fields})"
    )


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
    tool_glob = _check_tool_name(tool)
    content = _unescape_content(raw_content) if raw_content is not None else None
    if content in ("", "*"):
        content = None
    if tool_glob and content is not None:
        raise RuleSyntaxError(f"a tool-name glob ({tool}) takes no content")
    if tool_glob and behavior == "allow" and _unanchored_allow_glob(tool):
        return ParsedRule(
            stripped, tool, None, "tool", tool_glob, ignored=True,
            warning=(
                f"the tool-name glob {tool!r} is skipped in allow rules (as Claude Code does): "
                "an allow glob counts only after a literal mcp__<server>__ prefix"
            ),
        )
    if content is None:
        return ParsedRule(stripped, tool, None, "tool", tool_glob)
    if tool == "WebFetch" and content.strip().lower() == "domain:*":
        return ParsedRule(stripped, tool, None, "tool", tool_glob)
    kind, content, ignored, warning = _content_kind(tool, content, behavior)
    return ParsedRule(stripped, tool, content, kind, tool_glob, ignored, warning)
