"""Rule grammar: Tool, Tool(content), escapes, globs, and the errors a user sees."""

from __future__ import annotations

import re

import pytest

from toolrun.permissions.grammar import ParsedRule, RuleSyntaxError, parse_rule


@pytest.mark.parametrize(
    ("text", "tool", "content", "kind"),
    [
        ("Bash", "Bash", None, "tool"),
        ("Bash(*)", "Bash", None, "tool"),
        ("Bash()", "Bash", None, "tool"),
        ("  Read  ", "Read", None, "tool"),
        ("Bash(npm run test:*)", "Bash", "npm run test:*", "bash"),
        ("Bash(echo \\(hi\\))", "Bash", "echo (hi)", "bash"),
        ("Bash(echo a\\\\b)", "Bash", "echo a\\b", "bash"),
        ("Bash(echo \\*)", "Bash", "echo \\*", "bash"),
        ("Bash(python -c (1))", "Bash", "python -c (1)", "bash"),
        ("Read(./.env)", "Read", "./.env", "path"),
        ("Edit(//etc/**)", "Edit", "//etc/**", "path"),
        ("Read(~/.ssh/**)", "Read", "~/.ssh/**", "path"),
        ("WebFetch(domain:example.com)", "WebFetch", "domain:example.com", "domain"),
        ("WebFetch(domain:*)", "WebFetch", None, "tool"),
        ("mcp__github", "mcp__github", None, "tool"),
        ("mcp__github__get_issue", "mcp__github__get_issue", None, "tool"),
        ("Task", "Agent", None, "tool"),
        ("KillShell", "TaskStop", None, "tool"),
        ("Agent(Explore)", "Agent", "Explore", "opaque"),
        ("mcp__db__query(table:users)", "mcp__db__query", "table:users", "param"),
        ("Write(src/**)", "Write", "src/**", "path"),
    ],
)
def test_parses(text: str, tool: str, content: str | None, kind: str) -> None:
    rule = parse_rule(text)
    assert isinstance(rule, ParsedRule)
    assert (rule.tool, rule.content, rule.kind) == (tool, content, kind)
    assert rule.is_tool_wide is (content is None)


@pytest.mark.parametrize("text", ["*", "mcp__*", "B*", "mcp__github__get_*", "mcp__gh__*"])
def test_tool_name_globs_in_deny_and_ask(text: str) -> None:
    for behavior in ("deny", "ask"):
        assert parse_rule(text, behavior=behavior).tool_glob


@pytest.mark.parametrize("text", ["mcp__github__get_*", "mcp__github__*"])
def test_allow_glob_after_server_prefix(text: str) -> None:
    assert parse_rule(text, behavior="allow").tool_glob


@pytest.mark.parametrize(
    ("text", "behavior", "message"),
    [
        ("", None, "empty rule"),
        ("   ", None, "empty rule"),
        ("Bash(git", None, "must end with ')'"),
        ("Bash(git) x", None, "must end with ')'"),
        ("Bash(git\\)", None, "must end with ')'"),
        ("Bash)", None, "without a matching"),
        ("(git status)", None, "missing tool name"),
        ("Ba sh(x)", None, "no spaces"),
        ("Bash(a)b)", None, "unbalanced ')'"),
        ("Bash(a(b)", None, "unbalanced '('"),
        ("Bash(:*)", None, "empty command prefix"),
        ("WebFetch(example.com)", None, "domain:HOST"),
        ("WebFetch(domain:)", None, "needs a host"),
        ("WebFetch(domain:exa mple.com)", None, "invalid domain"),
        ("Read(~bob/x)", None, "only '~/'"),
        ("Read([abc)", None, "unclosed '['"),
        ("mcp__github(read)", None, "MCP rules take no content"),
        ("*", "allow", "only allowed in deny and ask"),
        ("mcp__*", "allow", "only allowed in deny and ask"),
        ("B*", "allow", "only allowed in deny and ask"),
        ("mcp__*(x)", "deny", "takes no content"),
        ("Bash$", None, "invalid tool name"),
        ("Agent(command:x)", "deny", "primary field"),
        ("Agent(model:opus)", "allow", "deny and ask"),
    ],
)
def test_malformed(text: str, behavior: str | None, message: str) -> None:
    with pytest.raises(RuleSyntaxError, match=re.escape(message)):
        parse_rule(text, behavior=behavior)


def test_rule_syntax_error_is_a_value_error() -> None:
    assert issubclass(RuleSyntaxError, ValueError)


def test_non_string() -> None:
    with pytest.raises(RuleSyntaxError, match="must be a string"):
        parse_rule(3)  # type: ignore[arg-type]
