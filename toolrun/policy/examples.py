"""Rule self-tests (``toolrun.examples``), like Codex execpolicy's ``match`` / ``not_match``.

Each example is one call and the decision the permission rules and mode must give it;
a failure is a located problem naming what decided instead. Hooks are not run: the
examples test the rules, which is what a policy change touches.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolrun.builtin_fields import main_field
from toolrun.config.keys import is_known_tool, tool_hint
from toolrun.errors import Problem

if TYPE_CHECKING:
    from toolrun.config.models import Config, RuleExample
    from toolrun.tools.registry import ToolRegistry

_RULE_FORM = re.compile(r"([A-Za-z0-9_.-]+)(?:\((.*)\))?", re.DOTALL)


class ExampleCallError(ValueError):
    """An example whose call cannot be read."""


def example_call(example: RuleExample) -> tuple[str, Mapping[str, Any]]:
    """The (tool, input) of an example: ``Tool(arg)`` fills the tool's main argument."""
    if example.tool is not None:
        return example.tool, example.input or {}
    text = example.call or ""
    match = _RULE_FORM.fullmatch(text.strip())
    if match is None:
        raise ExampleCallError(f"call {text!r} is not of the form Tool or Tool(argument)")
    tool, content = match.group(1), match.group(2)
    if not is_known_tool(tool):
        raise ExampleCallError(f"example {text!r}: unknown tool {tool!r}{tool_hint(tool)}")
    if content is None:
        return tool, {}
    field = main_field(tool)
    if field is None:
        raise ExampleCallError(
            f"call {text!r}: {tool} has no main argument; give tool: and input: instead"
        )
    return tool, {field: re.sub(r"\\([()\\])", r"\1", content)}


def check_examples(config: Config, registry: ToolRegistry | None = None) -> list[Problem]:
    """Every example whose decision is not the expected one, as a located problem."""
    if not config.examples:
        return []
    from toolrun.permissions import PermissionEngine
    from toolrun.permissions.explain import call_label, describe_decided_by

    engine = PermissionEngine(config, registry)
    problems: list[Problem] = []
    for example in config.examples:
        try:
            tool, tool_input = example_call(example)
        except ExampleCallError as exc:
            problems.append(Problem(example.location, example.path, str(exc)))
            continue
        if not is_known_tool(tool) and (registry is None or tool not in registry):
            message = f"example {example.call or tool!r}: unknown tool {tool!r}{tool_hint(tool)}"
            problems.append(Problem(example.location, example.path, message))
            continue
        decision = engine.decide(tool, tool_input, mode=example.mode)
        if decision.decision == example.expect:
            continue
        problems.append(
            Problem(
                example.location,
                example.path,
                f"example {call_label(tool, tool_input)}: expected {example.expect}, got "
                f"{decision.decision} — decided by {describe_decided_by(decision.decided_by)}",
            )
        )
    return problems
