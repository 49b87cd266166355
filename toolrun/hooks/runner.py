"""Running the hooks of one event for one call: select, run concurrently, merge.

Matching hooks of one event run concurrently (one task each); a matcher group
with ``sequential: true`` runs as one task whose hooks run in order, each
seeing the previous hook's rewrite (``updatedInput`` as its ``tool_input`` for
PreToolUse, ``updatedToolOutput`` as its ``tool_response`` for PostToolUse).
Results are kept in config order, whatever order the hooks finish in.

A hook with ``async: true`` starts in the background (inside :meth:`HookRunner.
background`, which waits for it at the end of the run) and gives no decision: its
run goes to ``on_background`` (the journal) when it ends. ``type: http`` hooks
POST the same payload (:mod:`toolrun.hooks.http`).

The file paths of the built-in tools' ``tool_input`` (``file_path``,
``notebook_path``, ``path``) are sent absolute, as Claude Code sends them: hooks
compare them with ``$CLAUDE_PROJECT_DIR``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
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
from toolrun.hooks.process import ProcessResult, run_command
from toolrun.hooks.protocol import (
    SESSION_EVENTS,
    HookIdentity,
    build_input,
    encode_input,
    interpret,
    unsupported,
)

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from toolrun.config.models import HookCommand
    from toolrun.tools.registry import ToolRegistry

#: SessionEnd hooks without a ``timeout`` of their own get Claude Code's 1.5 s budget
SESSION_END_TIMEOUT = 1.5
#: Built-in tools whose path fields Claude Code sends absolute (docs/hooks "PreToolUse
#: input": "for Write, Edit and Read, file_path is always absolute"; Glob's and Grep's
#: ``path`` and NotebookEdit's ``notebook_path`` alike).
_PATH_FIELDS: dict[str, tuple[str, ...]] = {
    "Read": ("file_path",), "Write": ("file_path",), "Edit": ("file_path",),
    "MultiEdit": ("file_path",), "NotebookEdit": ("notebook_path",),
    "NotebookRead": ("notebook_path",), "Glob": ("path",), "Grep": ("path",), "LS": ("path",),
}  # fmt: skip

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
        #: where ``async: true`` hooks run (None: no run is open; they run at once)
        self._background: TaskGroup | None = None
        #: told of each background hook's run when it ends (the executor journals it)
        self.on_background: Callable[[HookRun], None] | None = None

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
        if event in SESSION_EVENTS:
            return _without_if(select_hooks(self.config, event, tool, None))
        return select_hooks(
            self.config, event, tool, tool_input, cwd=cwd or self.workspace, if_check=self._if
        )

    @contextlib.asynccontextmanager
    async def background(self) -> AsyncIterator[None]:
        """The run's lifetime for ``async: true`` hooks: they start inside it and it ends
        when the last one has (each is bounded by its timeout), so none outlives the run."""
        async with anyio.create_task_group() as tg:
            self._background = tg
            try:
                yield
            finally:
                self._background = None

    def cancel_background(self) -> None:
        """The run was interrupted: end the background hooks now (their process groups)."""
        if self._background is not None:
            self._background.cancel_scope.cancel()

    async def session_event(self, event: HookEvent, **fields: Any) -> PostToolResult:
        """SessionStart (``source``), SessionEnd (``reason``) or Stop
        (``stop_hook_active``, ``last_assistant_message``): the matcher reads the first
        field, as Claude Code's does; a hook with ``if`` never runs on these events."""
        subject = str(fields.get("source") or fields.get("reason") or "")
        selection = self.select(event, subject if event != "Stop" else None)
        payload = self._input(event, None, session_fields=fields)
        return await self._post(selection, payload)

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
        merged = merge_pre_tool_use(
            runs, skipped=selection.skipped, problems=selection.problems, event=event
        )
        if merged.updated_input is not None and runs:
            sent = payload["tool_input"]
            if dict(merged.updated_input) == sent and sent != dict(tool_input):
                # the input echoed back with its paths made absolute: the same call
                from dataclasses import replace

                merged = replace(merged, updated_input=dict(tool_input))
        return merged

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
        from dataclasses import replace

        selection = self.select("PostToolBatch", None, cwd=cwd)
        calls = [
            replace(c, tool_input=absolute_paths(c.tool_name, c.tool_input, self.workspace))
            if c.tool_name in _PATH_FIELDS else c
            for c in calls
        ]
        payload = self._input("PostToolBatch", cwd, tool_calls=calls)
        return await self._post(selection, payload)

    # ------------------------------------------------------------------ running

    def _input(self, event: HookEvent, cwd: Path | None, **fields: Any) -> dict[str, Any]:
        """The stdin object of ``event``, with the fields common to every event."""
        tool, given = fields.get("tool_name"), fields.get("tool_input")
        if given is not None and tool in _PATH_FIELDS:
            fields["tool_input"] = absolute_paths(tool, given, self.workspace)
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
        if event == "SessionEnd" and hook.timeout is None:
            timeout = SESSION_END_TIMEOUT  # Claude Code's budget: the run is over
        if hook.async_:
            return self._start_background(who, hook, payload, timeout)
        result = await self._process(hook, payload, timeout)
        return interpret(who, result, failure_mode=failure_mode, timeout=timeout)

    async def _process(
        self, hook: HookCommand, payload: Mapping[str, Any], limit: float
    ) -> ProcessResult:
        """Run one hook (a command, or an http POST) to its end."""
        if hook.type == "http":
            from toolrun.hooks.http import post_hook

            return await post_hook(
                hook,
                encode_input(payload),
                env=self.env,
                time_limit=limit,
                allowed_urls=self.config.allowed_http_hook_urls,
                allowed_env_vars=self.config.http_hook_allowed_env_vars,
            )
        env = self.env
        if hook.plugin_root is not None:  # Claude Code sets these for a plugin's hooks
            env = {**env, "CLAUDE_PLUGIN_ROOT": str(hook.plugin_root)}
            if hook.plugin_data is not None:
                hook.plugin_data.mkdir(parents=True, exist_ok=True)
                env["CLAUDE_PLUGIN_DATA"] = str(hook.plugin_data)
        return await run_command(
            hook.command, encode_input(payload), cwd=self.workspace, env=env, time_limit=limit
        )

    def _start_background(
        self, who: HookIdentity, hook: HookCommand, payload: Mapping[str, Any], timeout: float
    ) -> HookRun:
        """``async: true``: the hook runs on in the background; its output decides nothing
        (Claude Code: "runs in the background without blocking"). Its own run, when it
        ends, goes to ``on_background``; here, a record that it started."""

        async def run_it() -> None:
            result = await self._process(hook, payload, timeout)
            # whatever it said, it decides nothing: interpreted as with hookFailure open
            ran = interpret(who, result, failure_mode="open", timeout=timeout)
            if self.on_background is not None:
                self.on_background(ran)

        started = HookRun(
            event=who.event, command=who.command, source=who.source, matcher=who.matcher,
            outcome="background", duration_ms=0,
        )  # fmt: skip
        if self._background is not None:
            self._background.start_soon(run_it)
        else:  # no run to outlive (explain-permission): nothing can wait for it; skip it
            return HookRun(
                **{**_fields(started), "error": "async hook not run: no run to run it in"}
            )
        return started


def _fields(run: HookRun) -> dict[str, Any]:
    return {name: getattr(run, name) for name in HookRun.__slots__}


def _without_if(selection: Selection) -> Selection:
    """A hook with ``if`` on an event that is not a tool event never runs (Claude Code)."""
    from dataclasses import replace

    from toolrun.hooks.models import SkippedHook

    kept: list[SelectedHook] = []
    skipped = list(selection.skipped)
    for selected in selection.hooks:
        hook = selected.hook
        if hook.if_rule is None:
            kept.append(replace(selected, position=len(kept)))
        else:
            why = f"`if: {hook.if_rule}` applies to tool events only: it never runs here"
            skipped.append(SkippedHook(selection.event, hook.command, selected.source, why))
    return replace(selection, hooks=tuple(kept), skipped=tuple(skipped))


def absolute_paths(tool: str, tool_input: Mapping[str, Any], workspace: Path) -> dict[str, Any]:
    """``tool_input`` with its path fields absolute (``~`` expanded, relative to the
    workspace, ``..`` folded: the path the tool opens); a path the tool would refuse is
    sent as written."""
    from toolrun.errors import ToolrunError
    from toolrun.permissions.paths import tool_path

    out = dict(tool_input)
    for name in _PATH_FIELDS[tool]:
        value = out.get(name)
        if not isinstance(value, str) or not value:
            continue
        home = os.path.expanduser("~") if value.startswith("~") else ""
        try:
            out[name] = tool_path(value, base=str(workspace), home=home, field=name)
        except (ToolrunError, ValueError):
            continue
    return out
