"""Hooks with Claude Code's protocol: PreToolUse, PostToolUse, PostToolUseFailure, PostToolBatch.

The public API (everything the executor and ``explain-permission`` need)::

    runner = HookRunner(config, run_id=run_id, permission_mode=mode, registry=registry)

    # before deciding a call
    pre = await runner.pre_tool_use(tool, input, call_id=call_id, cwd=cwd)
    new_input = pre.updated_input if pre.updated_input is not None else input
    # ... re-validate new_input against the tool schema, then:
    final = merge_decision(engine.decide(tool, new_input, cwd=cwd), pre)
    final.decision, final.reason, final.decided_by      # allow/ask/deny, kind "hook" or the rules'

    # after the call
    post = await runner.post_tool_use(tool, new_input, response, call_id=call_id, cwd=cwd)
    post = await runner.post_tool_use_failure(tool, new_input, error, call_id=call_id, cwd=cwd)
    # after each concurrent run
    batch = await runner.post_tool_batch([BatchCall(...), ...], cwd=cwd)

Every result carries ``runs`` (one :class:`HookRun` per hook process, config
order), ``skipped`` (matched but filtered by ``if`` or de-duplicated) and
``problems`` (invalid matcher regexes); all of it is frozen and ``to_json()``
-able. ``runner.select(...)`` says which hooks would run without running
them, and :func:`matcher_problems` lists invalid matchers of a config.

Nothing here prints or imports click.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.lazy import exports

if TYPE_CHECKING:
    from toolrun.hooks.conditions import IfFilter
    from toolrun.hooks.matching import (
        CompiledMatcher,
        IfVerdict,
        SelectedHook,
        Selection,
        compile_matcher,
        matcher_matches,
        matcher_problems,
        select_hooks,
    )
    from toolrun.hooks.merge import (
        hook_allow_applies,
        merge_decision,
        merge_post,
        merge_pre_tool_use,
    )
    from toolrun.hooks.models import (
        BatchCall,
        FinalDecidedBy,
        FinalDecision,
        HookEvent,
        HookRef,
        HookRun,
        PostToolResult,
        PreToolUseResult,
        SkippedHook,
    )
    from toolrun.hooks.process import ProcessResult, run_command
    from toolrun.hooks.protocol import build_input, interpret, parse_output
    from toolrun.hooks.runner import HookRunner

# each name loads with its module on first use (see toolrun.lazy)
__getattr__ = exports(
    __name__,
    {
        "IfFilter": "conditions",
        "CompiledMatcher": "matching",
        "IfVerdict": "matching",
        "SelectedHook": "matching",
        "Selection": "matching",
        "compile_matcher": "matching",
        "matcher_matches": "matching",
        "matcher_problems": "matching",
        "select_hooks": "matching",
        "hook_allow_applies": "merge",
        "merge_decision": "merge",
        "merge_post": "merge",
        "merge_pre_tool_use": "merge",
        "BatchCall": "models",
        "FinalDecidedBy": "models",
        "FinalDecision": "models",
        "HookEvent": "models",
        "HookRef": "models",
        "HookRun": "models",
        "PostToolResult": "models",
        "PreToolUseResult": "models",
        "SkippedHook": "models",
        "ProcessResult": "process",
        "run_command": "process",
        "build_input": "protocol",
        "interpret": "protocol",
        "parse_output": "protocol",
        "HookRunner": "runner",
    },
)

__all__ = [
    "BatchCall",
    "CompiledMatcher",
    "FinalDecidedBy",
    "FinalDecision",
    "HookEvent",
    "HookRef",
    "HookRun",
    "HookRunner",
    "IfFilter",
    "IfVerdict",
    "PostToolResult",
    "PreToolUseResult",
    "ProcessResult",
    "SelectedHook",
    "Selection",
    "SkippedHook",
    "build_input",
    "compile_matcher",
    "hook_allow_applies",
    "interpret",
    "matcher_matches",
    "matcher_problems",
    "merge_decision",
    "merge_post",
    "merge_pre_tool_use",
    "parse_output",
    "run_command",
    "select_hooks",
]
