"""``toolrun explain-permission``: one call, the full decision trace.

Only click and the standard library at import time; the permission engine
(and tree-sitter) load inside the command.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.shell_completion import CompletionItem

from toolrun.builtin_fields import BUILTIN_TOOL_NAMES, MAIN_FIELDS
from toolrun.cli.options import config_options, enforce_option, text_or_json_option

if TYPE_CHECKING:
    from toolrun.tools.registry import ToolRegistry

# stdlib-only tables, so that TAB completion imports nothing heavy
TOOL_NAMES = BUILTIN_TOOL_NAMES
#: Input fields the positional forms fill, per built-in tool.
POSITIONAL_FIELDS = MAIN_FIELDS
_RULE_LIKE = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]*)\((.*)\)", re.DOTALL)
_EXIT = {"allow": 0, "deny": 4, "ask": 5}


def _complete_call(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Tool names for the first word (also ``Tool(`` for the rule-like form)."""
    if ctx.params.get("call"):
        return []
    return [CompletionItem(name) for name in TOOL_NAMES if name.startswith(incomplete)]


def _unescape(content: str) -> str:
    return re.sub(r"\\([()\\])", r"\1", content)


def parse_call(
    words: tuple[str, ...],
    call_json: str | None,
    check_tool: Callable[[str], None] = lambda tool: None,
) -> tuple[str, dict[str, Any]]:
    """The (tool, input) of the three input forms; UsageError for anything else.

    ``check_tool`` raises for a tool name that does not exist (before its input is parsed).
    """
    import json

    from toolrun.errors import UsageError
    from toolrun.yamlfile import NUL_MESSAGE, DocumentError, format_path, nul_paths, parse_json

    def json_arg(text: str, name: str) -> Any:
        # read as a plan's JSON is, with its limits (depth, lone surrogates, long numbers)
        try:
            return parse_json(text, name).data
        except DocumentError as exc:
            where = exc.problem.location
            at = f" (line {where.line}, column {where.column})" if where else ""
            message = exc.problem.message.removeprefix("invalid JSON: ")
            raise UsageError(f"{name} is not valid JSON: {message}{at}") from None

    def checked(tool: str, tool_input: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        for path in nul_paths(tool_input, ("input",)):
            raise UsageError(f"{format_path(path)}: {NUL_MESSAGE}")
        try:  # an argument with bytes that are not UTF-8 arrives with lone surrogates
            json.dumps(tool_input, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError("the call is not UTF-8 text (an argument has other bytes)") from None
        return tool, tool_input

    if call_json is not None:
        if words:
            raise UsageError("give either --call JSON or a call on the command line, not both")
        data = json_arg(call_json, "--call")
        if not isinstance(data, dict) or not isinstance(data.get("tool"), str):
            raise UsageError('--call needs an object {"tool": NAME, "input": {...}}')
        call_input = data.get("input", {})
        if not isinstance(call_input, dict):
            raise UsageError("--call: input must be an object")
        check_tool(data["tool"])
        return checked(data["tool"], call_input)
    if not words:
        raise UsageError(
            "give a call: TOOL ARG (e.g. Bash 'git status'), 'Tool(arg)' or --call JSON"
        )
    tool, args = words[0], list(words[1:])
    rule_like = _RULE_LIKE.fullmatch(tool) if not args else None
    if rule_like is not None:
        tool, args = rule_like.group(1), [_unescape(rule_like.group(2))]
    check_tool(tool)
    fields = POSITIONAL_FIELDS.get(tool)
    if fields is None:
        if len(args) > 1:
            raise UsageError(f"{tool}: give its input as one JSON object, or use --call")
        if not args:
            return tool, {}
        value = json_arg(args[0], f"{tool}'s input") if args[0].lstrip().startswith("{") else None
        if not isinstance(value, dict):
            raise UsageError(f"{tool} is not a built-in tool: give its input as a JSON object")
        return checked(tool, value)
    if not args:
        raise UsageError(f"{tool} needs its {fields[0]} (e.g. {tool} ARG)")
    if tool == "Bash":
        return checked(tool, {"command": " ".join(args)})
    if tool in ("Glob", "Grep") and rule_like is not None and len(args) == 1:
        return checked(tool, {"pattern": args[0]})
    if len(args) > len(fields):
        raise UsageError(f"{tool} takes {' and '.join(fields)}; got {len(args)} arguments")
    return checked(tool, dict(zip(fields, args, strict=False)))


class _CallCommand(click.Command):
    """Words after the tool name that are not explain-permission's own options are the call's.

    So ``toolrun explain-permission Bash git push --force`` explains ``git push --force``
    instead of failing on ``--force``; an option of ours (``--format json``) still counts
    anywhere, and after ``--`` every word is the call's.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value: dict[str, bool] = {}
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                for name in (*param.opts, *param.secondary_opts):
                    takes_value[name] = not (param.is_flag or param.count)
        ours: list[str] = []
        words: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg == "--":
                words.extend(args[i:])
                break
            name = arg.split("=", 1)[0] if arg.startswith("--") else arg
            if arg.startswith("-") and name in takes_value:
                ours.append(arg)
                if takes_value[name] and "=" not in arg and i < len(args):
                    ours.append(args[i])
                    i += 1
            elif not words and arg.startswith("-"):
                ours.append(arg)  # before the tool: click reports an unknown option as usual
            else:
                words.append(arg)
        return super().parse_args(ctx, [*ours, "--", *words] if words else ours)


@click.command(name="explain-permission", cls=_CallCommand)
@click.argument("call", nargs=-1, metavar="CALL...", shell_complete=_complete_call)
@click.option(
    "--call",
    "call_json",
    metavar="JSON",
    help='The call as JSON: {"tool": "Edit", "input": {"file_path": "src/a.py"}}.',
)
@text_or_json_option("text: the readable trace; json: one object.")
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Bash working directory [default: the workspace].",
)
@click.option(
    "--hooks",
    "run_hooks",
    is_flag=True,
    help="Also run the matching PreToolUse hooks and show their part in the decision.",
)
@config_options
@enforce_option
def explain_permission(
    call: tuple[str, ...],
    call_json: str | None,
    fmt: str,
    cwd: Path | None,
    run_hooks: bool,
    config_file: Path | None,
    settings_files: tuple[Path, ...],
    workspace: Path,
    mode: str | None,
    enforce: str | None,
) -> int:
    """Explain how one call is decided: allow, ask or deny, and why.

    \b
    Three equivalent forms:
      toolrun explain-permission Bash 'git push origin main'
      toolrun explain-permission 'Bash(git push origin main)'
      toolrun explain-permission --call '{"tool": "Edit", "input": {"file_path": "src/a.py"}}'

    \b
    The words after the tool are the call's, options included:
      toolrun explain-permission Bash git push --force
    except this command's own options (--format, --mode, ...); after --
    every word is the call's:
      toolrun explain-permission -- Bash ls --format json

    Shows the mode and its source, the workspace boundary check, each Bash
    sub-command with its verdict, every rule considered with its source
    file:line, and the decisive step. With --hooks the PreToolUse hooks run
    too (they may rewrite the input, which is then decided again). Exit
    codes: 0 allow, 4 deny, 5 ask, 3 invalid config.
    """
    import json

    from toolrun.cli.options import load_config_from_options
    from toolrun.errors import UsageError
    from toolrun.permissions import BUILTIN_TOOLS, PermissionEngine
    from toolrun.permissions.explain import render_text

    registry: ToolRegistry | None = None

    def check_tool(name: str) -> None:
        nonlocal registry
        if name in BUILTIN_TOOLS or name.startswith("mcp__"):
            return
        from toolrun.permissions.claude_tools import claude_tool

        if claude_tool(name) is not None:  # decided as Claude Code decides it (TodoWrite, ...)
            return
        from toolrun.tools.registry import default_registry

        registry = default_registry()
        if name not in registry:
            suggestion = registry.suggest(name)
            hint = (f" (did you mean {suggestion}?)" if suggestion else "") + _command_hint(call)
            raise UsageError(f"unknown tool {name!r}{hint}")

    tool, call_input = parse_call(call, call_json, check_tool)
    config = load_config_from_options(config_file, settings_files, workspace, mode, enforce)
    engine = PermissionEngine(config, registry)
    call_cwd = cwd.absolute() if cwd else None
    if run_hooks:
        return _explain_with_hooks(engine, config, registry, tool, call_input, call_cwd, fmt)
    from toolrun.permissions.enforce import as_placed_here
    from toolrun.permissions.suggest import suggestion_for

    decision, suggestion = suggestion_for(engine, tool, call_input, cwd=call_cwd)
    decision = as_placed_here(decision, engine.jail_unavailable)
    if fmt == "json":
        out = decision.to_json()
        out.update(sources=list(config.sources()), config_warnings=list(config.warnings))
        if decision.decision == "ask":
            out["suggestion"] = suggestion.to_json()
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(decision, config.sources()))
        if decision.decision == "ask":
            click.echo(suggestion_text(suggestion))
    return _EXIT[decision.decision]


def _command_hint(words: tuple[str, ...]) -> str:
    """For ``git push`` given as the call: how to explain it as a Bash command."""
    import shlex

    if not words or not re.match(r"[a-z./]", words[0]):
        return ""  # tool names start upper-case (Bash, Read) or with mcp__
    command = " ".join(words)
    return (
        "; the first word names the tool: to explain a shell command, write "
        f"toolrun explain-permission Bash {shlex.quote(command)}"
    )


def suggestion_text(suggestion: Any) -> str:
    """``suggested rule: X`` (what "always" at the exec prompt would add), or why none."""
    rules = suggestion.rules
    if not rules:
        return f"suggested rule: none — {suggestion.why}"
    if len(rules) == 1:
        return f"suggested rule: {rules[0]} (the narrowest allow rule for this call)"
    return f"suggested rules: {', '.join(rules)} (the narrowest allow rules for this call)"


def _explain_with_hooks(
    engine: Any,
    config: Any,
    registry: ToolRegistry | None,
    tool: str,
    call_input: dict[str, Any],
    cwd: Path | None,
    fmt: str,
) -> int:
    """The same path as exec: hooks first, their rewrite re-validated and re-decided."""
    import json

    import anyio
    from pydantic import ValidationError

    from toolrun.hooks import FinalDecidedBy, FinalDecision, HookRunner, merge_decision
    from toolrun.hooks.explain import render_hooks_text
    from toolrun.permissions.explain import render_text
    from toolrun.tools.registry import default_registry

    registry = registry or default_registry()
    runner = HookRunner(config, run_id="explain-permission", registry=registry)
    pre = anyio.run(lambda: runner.pre_tool_use(tool, call_input, call_id="explain", cwd=cwd))
    effective = dict(pre.updated_input) if pre.updated_input is not None else call_input
    from toolrun.permissions.enforce import as_placed_here

    decision = as_placed_here(engine.decide(tool, effective, cwd=cwd), engine.jail_unavailable)
    final = merge_decision(decision, pre)
    known = registry.get(tool)
    if pre.updated_input is not None and known is not None:
        try:
            known.input_model.model_validate(effective)
        except ValidationError as exc:
            final = FinalDecision(
                "deny",
                f"the hook's updatedInput is not valid {tool} input: "
                + "; ".join(e["msg"] for e in exc.errors(include_url=False)),
                FinalDecidedBy(
                    "hook",
                    pre.decided_by.command if pre.decided_by else None,
                    pre.decided_by.source if pre.decided_by else None,
                ),
            )
    from toolrun.permissions.suggest import Suggestion, suggest

    # what "always" would add: only when the rules (not a hook) ask
    suggestion = suggest(engine, decision, cwd=cwd) if final.decision == "ask" else None
    if suggestion is not None and pre.decision == "ask":
        suggestion = Suggestion(why="a hook asked: it asks again for each call")
    if fmt == "json":
        out = decision.to_json()
        out.update(sources=list(config.sources()), config_warnings=list(config.warnings))
        if suggestion is not None:
            out["suggestion"] = suggestion.to_json()
        out["rules_decision"] = {"decision": out["decision"], "reason": out["reason"]}
        out.update(
            decision=final.decision,
            reason=final.reason,
            decided_by=final.decided_by.to_json(),
            hooks=pre.to_json(),
            input=effective,
        )
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(decision, config.sources()))
        click.echo(render_hooks_text(pre, final))
        if suggestion is not None:
            click.echo(suggestion_text(suggestion))
    return _EXIT[final.decision]
