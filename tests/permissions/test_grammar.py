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
        ("mcp__*(x)", "deny", "takes no content"),
        ("Bash$", None, "invalid tool name"),
        ("Bash(command:rm *)", "deny", "primary field"),
        ("Bash(command: rm *)", "ask", "primary field"),
        ("Read(file_path:.env)", "deny", "primary field"),
        ("WebFetch(url:*evil*)", "deny", "primary field"),
        ("mcp__db__query(x)", "deny", "MCP rules take no content"),
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


# Claude Code's newer rule forms (docs/permissions "Match by input parameter",
# "Tool name wildcards"): they load instead of being misread or rejecting the config.


@pytest.mark.parametrize(
    ("text", "tool", "content"),
    [
        ("Bash(run_in_background:true)", "Bash", "run_in_background:true"),
        ("Bash(run_in_background : true)", "Bash", "run_in_background:true"),
        ("Bash(timeout:30)", "Bash", "timeout:30"),
        ("Bash(timeout: *)", "Bash", "timeout:*"),
        ("Bash(description:deploy *)", "Bash", "description:deploy *"),
        ("Agent(model:opus)", "Agent", "model:opus"),
        ("Agent(isolation:*)", "Agent", "isolation:*"),
        ("Agent(command:x)", "Agent", "command:x"),  # only built-ins have a primary field
        ("Read(limit:10)", "Read", "limit:10"),
        ("Edit(replace_all:true)", "Edit", "replace_all:true"),
        ("WebFetch(prompt:*secret*)", "WebFetch", "prompt:*secret*"),
        ("mcp__db__query(table:users)", "mcp__db__query", "table:users"),
    ],
)
def test_param_rules_in_deny_and_ask(text: str, tool: str, content: str) -> None:
    for behavior in ("deny", "ask"):
        rule = parse_rule(text, behavior=behavior)
        assert (rule.tool, rule.content, rule.kind) == (tool, content, "param")
        assert not rule.ignored and rule.warning == ""


@pytest.mark.parametrize(
    ("text", "kind", "content"),
    [
        ("Bash(npm:*)", "bash", "npm:*"),  # the legacy prefix form, not a parameter
        ("Bash(git:*)", "bash", "git:*"),
        ("Bash(npm run test:unit)", "bash", "npm run test:unit"),
        ("Read(C:x)", "path", "C:x"),  # not a Read input field: a path pattern
    ],
)
def test_a_colon_is_a_parameter_only_for_an_input_field(text: str, kind: str, content: str) -> None:
    rule = parse_rule(text, behavior="deny")
    assert (rule.kind, rule.content, rule.ignored) == (kind, content, False)


def test_a_bash_pattern_that_looks_like_a_parameter_says_how_it_is_read() -> None:
    rule = parse_rule("Bash(run_in_backgrond:true)", behavior="deny")
    assert rule.kind == "bash"
    assert "read as the command pattern 'run_in_backgrond:true'" in rule.warning
    legacy = parse_rule("Bash(timeout:*)", behavior="deny")
    assert legacy.kind == "bash" and "Bash(timeout: *)" in legacy.warning


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("*", "skipped in allow rules"),
        ("mcp__*", "skipped in allow rules"),
        ("B*", "skipped in allow rules"),
        ("mcp__*__read", "skipped in allow rules"),
        ("Bash(run_in_background:true)", "only in deny and ask rules"),
        ("Agent(model:opus)", "only in deny and ask rules"),
        ("Bash(command:git status)", "primary field"),
    ],
)
def test_allow_rules_claude_code_skips_load_ignored_with_a_warning(text: str, why: str) -> None:
    rule = parse_rule(text, behavior="allow")
    assert rule.ignored
    assert why in rule.warning
