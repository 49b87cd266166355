"""Running the hooks of one event for one call: select, run concurrently, merge.

Matching hooks of one event run concurrently (one task each); a matcher group
with ``sequential: true`` runs as one task whose hooks run in order, each
seeing the previous hook's rewrite (``updatedInput`` as its ``tool_input`` for
PreToolUse, ``updatedToolOutput`` as its ``tool_response`` for PostToolUse).
Results are kept in config order, whatever order the hooks finish in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from toolrun.config.models import Config
from toolrun.hooks.conditions import IfFilter
from toolrun.hooks.matching import SelectedHook, Selection, select_hooks
from toolrun.hooks.merge import merge_post, merge_pre_tool_use
from toolrun.hooks.models import (
    RUNNABLE_HOOK_TYPES,
    BatchCall,
    HookEvent,
    HookRun,
    PostToolResult,
    PreToolUseResult,
)
from toolrun.hooks.process import run_command
from toolrun.hooks.protocol import (
    HookIdentity,
    build_input,
    encode_input,
    interpret,
    unsupported,
)

if TYPE_CHECKING:
    from toolrun.tools.registry import ToolRegistry

#: Which stdin field a sequential chain passes on, and which run field feeds it.
_CHAIN: dict[str, tuple[str, str]] = {
    "PreToolUse": ("tool_input", "updated_input"),
    "PostToolUse": ("tool_response", "updated_tool_output"),
}


class HookRunner:
    """Runs a config's hooks for one toolrun run.

    ``run_id`` is sent as ``session_id`` and as ``TOOLRUN_RUN_ID``;
    ``permission_mode`` (default: the config's) as ``permission_mode``;
    ``transcript_path`` (the run's journal, if any) as ``transcript_path``.
    ``registry`` lets ``if`` path rules see the paths of registered tools.
    Safe to share between concurrent calls.
    """

    def __init__(
        self,
        config: Config,
        *,
        run_id: str,
        permission_mode: str | None = None,
        registry: ToolRegistry | None = None,
        transcript_path: str | None = None,
    ) -> None:
        self.config = config
        self.run_id = run_id
        self.transcript_path = transcript_path
        self.permission_mode = permission_mode or config.default_mode
        self.workspace = Path(os.path.abspath(config.workspace))
        self.env: Mapping[str, str] = {
            **os.environ,
            "CLAUDE_PROJECT_DIR": str(self.workspace),
            "TOOLRUN_RUN_ID": run_id,
        }
        self._if = IfFilter(config, registry)
        self._events = frozenset(g.event for g in config.hooks if g.hooks)

    # ------------------------------------------------------------------ public

    def has_hooks(self, event: HookEvent) -> bool:
        """Is any hook configured for ``event``? (Cheap; skip the event when not.)"""
        return event in self._events

    def select(
        self,
        event: HookEvent,
        tool: str | None,
        tool_input: Mapping[str, Any] | None = None,
        *,
        cwd: Path | None = None,
    ) -> Selection:
        """Which hooks would run for this call (matchers, ``if``, de-duplication)."""
        if event not in self._events:
            return Selection(event)
        return select_hooks(
            self.config, event, tool, tool_input, cwd=cwd or self.workspace, if_check=self._if
        )

    async def pre_tool_use(
        self,
        tool: str,
        tool_input: Mapping[str, Any],
        *,
        call_id: str,
        cwd: Path | None = None,
    ) -> PreToolUseResult:
        """Run the PreToolUse hooks of one call and merge their decisions and rewrites."""
        return await self._deciding("PreToolUse", tool, tool_input, cwd, tool_use_id=call_id)

    async def permission_request(
        self,
        tool: str,
        tool_input: Mapping[str, Any],
        *,
        cwd: Path | None = None,
        suggestions: Sequence[Mapping[str, Any]] = (),
    ) -> PreToolUseResult:
        """Run the PermissionRequest hooks of a call that asks, before anyone is asked:
        ``decision`` allow or deny (deny wins), or None (no answer: ask as usual)."""
        return await self._deciding(
            "PermissionRequest", tool, tool_input, cwd, permission_suggestions=suggestions
        )

    async def _deciding(
        self,
        event: HookEvent,
        tool: str,
        tool_input: Mapping[str, Any],
        cwd: Path | None,
        **fields: Any,
    ) -> PreToolUseResult:
        selection = self.select(event, tool, tool_input, cwd=cwd)
        runs: tuple[HookRun, ...] = ()
        if selection.hooks:
            payload = self._input(event, cwd, tool_name=tool, tool_input=tool_input, **fields)
            runs = await self._run(selection, payload)
        return merge_pre_tool_use(
            runs, skipped=selection.skipped, problems=selection.problems, event=event
        )

    async def post_tool_use(
        self,
        tool: str,
        tool_input: Mapping[str, Any],
        tool_response: Any,
        *,
        call_id: str,
        cwd: Path | None = None,
        duration_ms: int | None = None,
    ) -> PostToolResult:
        """Run the PostToolUse hooks of a call that succeeded."""
        return await self._after_call(
            "PostToolUse",
            tool,
            tool_input,
            call_id,
            cwd,
            tool_response=tool_response,
            duration_ms=duration_ms,
        )

    async def post_tool_use_failure(
        self,
        tool: str,
        tool_input: Mapping[str, Any],
        error: str,
        *,
        call_id: str,
        cwd: Path | None = None,
        duration_ms: int | None = None,
    ) -> PostToolResult:
        """Run the PostToolUseFailure hooks of a call that failed (not of a denied one)."""
        return await self._after_call(
            "PostToolUseFailure", tool, tool_input, call_id, cwd, error=error,
            duration_ms=duration_ms,
        )

    async def _after_call(
        self,
        event: HookEvent,
        tool: str,
        tool_input: Mapping[str, Any],
        call_id: str,
        cwd: Path | None,
        **extra: Any,
    ) -> PostToolResult:
        selection = self.select(event, tool, tool_input, cwd=cwd)
        payload = self._input(
            event,
            cwd,
            tool_name=tool,
            tool_input=tool_input,
            tool_use_id=call_id,
            **extra,
        )
        return await self._post(selection, payload)

    async def post_tool_batch(
        self, calls: Sequence[BatchCall], *, cwd: Path | None = None
    ) -> PostToolResult:
        """Run the PostToolBatch hooks once after a concurrent run (matchers ignored)."""
        selection = self.select("PostToolBatch", None, cwd=cwd)
        payload = self._input("PostToolBatch", cwd, tool_calls=calls)
        return await self._post(selection, payload)

    # ------------------------------------------------------------------ running

    def _input(self, event: HookEvent, cwd: Path | None, **fields: Any) -> dict[str, Any]:
        """The stdin object of ``event``, with the fields common to every event."""
        return build_input(
            event,
            session_id=self.run_id,
            transcript_path=self.transcript_path,
            cwd=cwd or self.workspace,
            permission_mode=self.permission_mode,
            **fields,
        )

    async def _post(self, selection: Selection, payload: dict[str, Any]) -> PostToolResult:
        runs = await self._run(selection, payload) if selection.hooks else ()
        return merge_post(
            selection.event, runs, skipped=selection.skipped, problems=selection.problems
        )

    async def _run(self, selection: Selection, payload: dict[str, Any]) -> tuple[HookRun, ...]:
        """Run every selected hook; return the runs in config order."""
        results: list[HookRun | None] = [None] * len(selection.hooks)
        units: list[list[SelectedHook]] = []
        chained: dict[int, list[SelectedHook]] = {}
        for selected in selection.hooks:
            if selected.sequential:
                if selected.group not in chained:
                    chained[selected.group] = []
                    units.append(chained[selected.group])
                chained[selected.group].append(selected)
            else:
                units.append([selected])

        async def run_unit(unit: list[SelectedHook]) -> None:
            current = payload
            chain = _CHAIN.get(selection.event)
            for selected in unit:
                run = await self.run_one(selection.event, selected, current)
                results[selected.position] = run
                if chain is not None and len(unit) > 1:
                    value = getattr(run, chain[1])
                    if value is not None:
                        current = {**current, chain[0]: value}

        if len(units) == 1:
            await run_unit(units[0])
        else:
            async with anyio.create_task_group() as tg:
                for unit in units:
                    tg.start_soon(run_unit, unit)
        return tuple(r for r in results if r is not None)

    async def run_one(
        self, event: HookEvent, selected: SelectedHook, payload: Mapping[str, Any]
    ) -> HookRun:
        """Run one hook with ``payload`` on stdin and interpret what it did."""
        hook = selected.hook
        who = HookIdentity(event, hook.command, selected.source, selected.matcher)
        failure_mode = self.config.toolrun.hook_failure
        if hook.type not in RUNNABLE_HOOK_TYPES:
            return unsupported(who, hook.type, failure_mode=failure_mode)
        timeout = hook.timeout if hook.timeout is not None else self.config.toolrun.hook_timeout
        result = await run_command(
            hook.command,
            encode_input(payload),
            cwd=self.workspace,
            env=self.env,
            time_limit=timeout,
        )
        return interpret(who, result, failure_mode=failure_mode, timeout=timeout)
