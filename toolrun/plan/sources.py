"""Inputs as ``exec`` and ``validate`` load them: the loading ``check`` does, one way.

Each input goes through :func:`toolrun.plan.importers.load_input` (detected or named with
``--from``, never empty unless allowed) and a recorded session's paths are rebased from
its recorded cwd onto the workspace (:func:`toolrun.plan.recorded.rebase_plan`), so that
``exec`` replays a session on the calls ``check`` decided.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from toolrun.errors import PlanError, Problem
from toolrun.plan.importers import Imported, load_input
from toolrun.plan.models import MAX_CALLS_PER_TURN
from toolrun.tools.registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class InputOptions:
    """``--from``, ``--transcript-cwd``, ``--allow-empty`` and ``--strict``."""

    source_format: str | None = None
    transcript_cwd: str | None = None
    allow_empty: bool = False
    strict: bool = False


def load_source(
    path: Path,
    registry: ToolRegistry,
    *,
    display: str,
    workspace: Path | str,
    options: InputOptions = InputOptions(),
    max_calls_per_turn: int = MAX_CALLS_PER_TURN,
) -> Imported:
    """One input, its recorded paths rebased onto ``workspace``; PlanError when invalid."""
    imported = load_input(
        path,
        registry,
        display=display,
        source_format=options.source_format,
        max_calls_per_turn=max_calls_per_turn,
        strict=options.strict,
        allow_empty=options.allow_empty,
    )
    if imported.format == "toolrun" or (not imported.cwds and options.transcript_cwd is None):
        return imported
    from toolrun.plan.recorded import rebase_plan

    rebased = rebase_plan(
        imported, str(Path(workspace).expanduser().resolve()), options.transcript_cwd
    )
    return dataclasses.replace(imported, plan=rebased.plan)


def load_sources(
    paths: Iterable[Path],
    registry: ToolRegistry,
    *,
    display: Callable[[Path], str] = str,
    workspace: Path | str = ".",
    options: InputOptions = InputOptions(),
    max_calls_per_turn: int = MAX_CALLS_PER_TURN,
) -> list[Imported]:
    """Several inputs; the problems of all of them are reported together. A folder stands
    for the plans and sessions in it (as `check DIR` and `validate DIR` read it)."""
    from toolrun.plan.discover import files_in

    loaded: list[Imported] = []
    problems: list[Problem] = []
    named: list[Path] = []
    for given in paths:
        found = list(files_in(given)) if given.is_dir() else [given]
        if not found:
            message = f"{display(given)}: this folder holds no plan or session toolrun reads"
            problems.append(Problem(None, "", message))
        named.extend(found)
    for path in named:
        try:
            loaded.append(
                load_source(
                    path,
                    registry,
                    display=display(path),
                    workspace=workspace,
                    options=options,
                    max_calls_per_turn=max_calls_per_turn,
                )
            )
        except PlanError as exc:
            problems.extend(exc.problems)
    if problems:
        raise PlanError(problems)
    return loaded
