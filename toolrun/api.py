"""toolrun's Python API: the decisions and reports the CLI renders, in your own process.

For agent frameworks that ask toolrun before each tool call, and for scripts that check
or run plans without a subprocess::

    import toolrun

    decision = toolrun.decide({"tool": "Bash", "input": {"command": "rm -rf build"}},
                              workspace="/path/to/project")
    decision.decision   # "allow" | "ask" | "deny"
    decision.reason     # names the rule and its file:line when one decided

- :func:`decide` is ``toolrun explain-permission``: one call, its
  :class:`~toolrun.permissions.Decision` (the same object, with the trace).
- :func:`check` is ``toolrun check``: plans and transcripts decided, nothing run, a
  :class:`~toolrun.report.models.CheckReport`.
- :func:`run` is ``toolrun exec``: plans validated, decided and run, an
  :class:`~toolrun.report.exec.ExecReport`.

Errors are toolrun's own (:mod:`toolrun.errors`): :class:`~toolrun.errors.ConfigError`
for a config that cannot be used, :class:`~toolrun.errors.PlanError` for a plan, each
listing every problem with its file, line and column. A call that is not a call (no
tool name, an input that is not a mapping) is a :class:`TypeError`.

``import toolrun`` loads none of this: each name loads on first use (the package's
``__getattr__``), so a framework importing toolrun pays nothing until it asks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from toolrun.config.models import Config
    from toolrun.execution.executor import AskHandler
    from toolrun.execution.results import Result
    from toolrun.live.engines import Engines
    from toolrun.permissions.decision import Decision
    from toolrun.permissions.resolver import PermissionEngine
    from toolrun.report.exec import ExecReport
    from toolrun.report.models import CheckReport, PlanCheck

__all__ = ["check", "decide", "run"]

StrPath = str | PathLike[str]
#: a call: ``{"tool": NAME, "input": {...}}`` (a plan's call), ``{"name": NAME, "input":
#: {...}}`` (an Anthropic ``tool_use`` block, an OpenAI function call with its arguments
#: parsed), or a ``(name, input)`` pair
CallLike = Mapping[str, Any] | tuple[str, Mapping[str, Any]]

_lock = threading.Lock()  # an engine decides one call at a time (its memo is shared)
_engines: Engines | None = None
#: engines of configs the caller built, by identity (the config is kept with its engine)
_given: dict[int, tuple[Config, PermissionEngine]] = {}
_MAX_GIVEN = 16


def _call_of(call: CallLike) -> tuple[str, Mapping[str, Any]]:
    if isinstance(call, tuple):
        if len(call) != 2:
            raise TypeError("a call tuple is (tool name, input)")
        tool, tool_input = call
    elif isinstance(call, Mapping):
        tool = call.get("tool", call.get("name"))
        tool_input = call.get("input", {})
    else:
        raise TypeError(f"a call is a mapping or a (tool, input) pair, not {type(call).__name__}")
    if not isinstance(tool, str) or not tool:
        raise TypeError("a call needs its tool name (the key 'tool' or 'name')")
    if not isinstance(tool_input, Mapping):
        raise TypeError(f"{tool}: the input must be a mapping, not {type(tool_input).__name__}")
    return tool, tool_input


def _engine(workspace: Path, config: Config | StrPath | None) -> PermissionEngine:
    global _engines
    from toolrun.config.models import Config

    if isinstance(config, Config):
        if Path(config.workspace).resolve() != workspace.resolve():
            raise ValueError(
                f"the config was loaded for {config.workspace}, not for the workspace {workspace}"
            )
        hit = _given.get(id(config))
        if hit is None or hit[0] is not config:
            from toolrun.permissions.resolver import PermissionEngine

            if len(_given) >= _MAX_GIVEN:
                _given.clear()
            hit = _given[id(config)] = (config, PermissionEngine(config))
        return hit[1]
    if _engines is None:
        from toolrun.live.engines import Engines

        _engines = Engines()
    config_file = Path(config) if config is not None else None
    return _engines.get(workspace.resolve(), config_file=config_file).engine


def decide(
    call: CallLike,
    *,
    workspace: StrPath,
    config: Config | StrPath | None = None,
    mode: str | None = None,
    cwd: StrPath | None = None,
) -> Decision:
    """Allow, ask or deny for one call, as ``toolrun explain-permission`` decides it.

    ``workspace``: the project (rules' ``./`` and the permission boundary start there).
    ``config``: None finds it as every command does (``toolrun.yaml`` in the workspace or
    a parent, the project's ``.claude/settings*.json``); a path names the toolrun.yaml;
    a :class:`~toolrun.config.Config` (from :func:`toolrun.config.load_config`) is used
    as it is. ``mode`` overrides the config's permission mode; ``cwd`` is where a Bash
    command runs (default: the workspace).

    The config and its compiled rules are kept between calls while their files are
    unchanged (an edited toolrun.yaml is read again on the next call), so asking before
    every tool call of an agent costs a decision, not a load. Safe to call from several
    threads (decisions are made one at a time).
    """
    tool, tool_input = _call_of(call)
    ws = Path(workspace)
    with _lock:
        engine = _engine(ws, config)
        return engine.decide(
            tool, tool_input, cwd=Path(cwd) if cwd is not None else None, mode=mode
        )


def check(
    paths: StrPath | Sequence[StrPath],
    *,
    workspace: StrPath = ".",
    config: StrPath | None = None,
    settings: Sequence[StrPath] = (),
    mode: str | None = None,
    fail_on: Literal["deny", "ask", "never"] = "deny",
    hooks: bool = True,
    jobs: int | None = 1,
    on_plan: Callable[[PlanCheck], None] | None = None,
) -> CheckReport:
    """Decide every call of the plans and transcripts at ``paths`` (files or globs), as
    ``toolrun check`` does; nothing is executed. ``report.exit_code`` is the CLI's."""
    from toolrun.commands.check import CheckRequest
    from toolrun.commands.check import check as check_inputs

    inputs = [paths] if isinstance(paths, str | PathLike) else list(paths)
    request = CheckRequest(
        inputs=[str(p) for p in inputs],
        workspace=Path(workspace),
        config_file=Path(config) if config is not None else None,
        settings_files=tuple(Path(s) for s in settings),
        mode=mode,
        fail_on=fail_on,
        hooks=hooks,
        jobs=jobs,
    )
    return check_inputs(request, on_plan=on_plan)


def run(
    plan: StrPath | Sequence[StrPath],
    *,
    workspace: StrPath = ".",
    config: StrPath | None = None,
    settings: Sequence[StrPath] = (),
    mode: str | None = None,
    dry_run: bool = False,
    ask: Literal["deny", "allow"] = "deny",
    ask_handler: AskHandler | None = None,
    journal: bool = True,
    hooks: bool = True,
    on_result: Callable[[Result], None] | None = None,
) -> ExecReport:
    """Validate, decide and run the plan(s), as ``toolrun exec`` does.

    A call that asks is answered by ``ask_handler`` (an async callable given the call and
    its decision) or else by ``ask`` ("deny", the default, or "allow"; never for a
    protected path). ``on_result`` gets each result in plan order as soon as it is in the
    journal. ``report.exit_code`` is the CLI's.
    """
    from toolrun.commands.exec import ExecRequest, execute

    plans = [plan] if isinstance(plan, str | PathLike) else list(plan)
    request = ExecRequest(
        plans=[Path(p) for p in plans],
        workspace=Path(workspace),
        config_file=Path(config) if config is not None else None,
        settings_files=tuple(Path(s) for s in settings),
        mode=mode,
        dry_run=dry_run,
        ask_default=ask,
        journal=journal,
        hooks=hooks,
    )
    return execute(request, on_result=on_result, ask=ask_handler)
