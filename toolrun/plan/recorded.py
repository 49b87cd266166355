"""A recorded session's calls, decided as if its working directory were the workspace.

The importers keep the directory each call was recorded in (:attr:`Imported.cwds`); this
rebases the calls' paths from the session's root (``--transcript-cwd``, else the first
recorded cwd) onto the workspace (see :mod:`toolrun.plan.rebase`) and gives each call the
directory it is decided in: its own recorded cwd, rebased when it lies under the root and
kept as it is otherwise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from toolrun.plan.importers import ForeignInput, Imported
from toolrun.plan.models import Call, Plan
from toolrun.plan.rebase import Rebase, usable_root
from toolrun.tools.registry import ToolRegistry

Change = tuple[str, str, str]  # (field, as recorded, as decided)


@dataclass(frozen=True, slots=True)
class RebasedPlan:
    plan: Plan
    cwds: Mapping[int, Path]  # call index -> the directory it is decided in
    changes: Mapping[int, tuple[Change, ...]]


def rebase_plan(
    imported: Imported, registry: ToolRegistry, workspace: str, transcript_cwd: str | None
) -> RebasedPlan:
    """``imported`` with its recorded paths mapped onto ``workspace``."""
    plan = imported.plan
    recorded = imported.cwds
    if transcript_cwd is None and not recorded:
        return RebasedPlan(plan, {}, {})
    first = recorded[min(recorded)] if recorded else None
    root = usable_root(transcript_cwd if transcript_cwd is not None else first or "")
    rebase = Rebase(root, workspace) if root is not None else None
    cwds: dict[int, Path] = {}
    changes: dict[int, tuple[Change, ...]] = {}
    turns = []
    for turn in plan.turns:
        calls = []
        for call in turn.calls:
            own = recorded.get(call.index)
            noted: list[Change] = []
            if own is not None and not own.startswith("/"):
                # relative to the project (Gemini's directory): below the workspace (a ".."
                # is kept, and is resolved there: outside the workspace)
                cwds[call.index] = Path(workspace) / own
                noted.append(("cwd", own, str(Path(workspace) / own)))
            elif own is not None:
                moved = rebase.path(own.rstrip("/") or "/") if rebase is not None else None
                cwds[call.index] = Path(moved if moved is not None else own)
                if own.rstrip("/") != root:  # shown only where the session moved
                    noted.append(("cwd", own, moved if moved is not None else own))
            if rebase is not None:
                call, done = _rebased_call(call, rebase, registry)
                noted.extend(done)
            if noted:
                changes[call.index] = tuple(noted)
            calls.append(call)
        turns.append(dataclasses.replace(turn, calls=tuple(calls)))
    return RebasedPlan(dataclasses.replace(plan, turns=tuple(turns)), cwds, changes)


def _rebased_call(call: Call, rebase: Rebase, registry: ToolRegistry) -> tuple[Call, list[Change]]:
    data, done = rebase.call_input(call.tool, call.input)
    if not done:
        return call, []
    tool = registry.get(call.tool)
    try:
        params = (
            tool.input_model.model_validate(data)
            if tool is not None
            else ForeignInput.model_validate(data)
        )
    except ValidationError:
        return call, []  # kept as recorded: decided as outside the workspace
    changed = dataclasses.replace(call, input=data, params=params)
    return changed, [(c.field, c.recorded, c.rebased) for c in done]
