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

from toolrun.plan.importers import Imported
from toolrun.plan.models import Call, InvalidInput, Plan
from toolrun.plan.rebase import Rebase, usable_root, windows_absolute, windows_form
from toolrun.tools.inputs import Params, spec_of
from toolrun.validation import Invalid, validate

Change = tuple[str, str, str]  # (field, as recorded, as decided)


@dataclass(frozen=True, slots=True)
class RebasedPlan:
    plan: Plan
    cwds: Mapping[int, Path]  # call index -> the directory it is decided in
    changes: Mapping[int, tuple[Change, ...]]


def rebase_plan(
    imported: Imported, workspace: str, transcript_cwd: str | None
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
    places: dict[str, Path] = {}  # each recorded cwd as decided (a session has few)
    changes: dict[int, tuple[Change, ...]] = {}
    turns = []
    for turn in plan.turns:
        calls = []
        for call in turn.calls:
            own = recorded.get(call.index)
            noted: list[Change] = []
            if own is not None:
                decided = places.get(own)
                if decided is None:
                    decided = places[own] = _decided_cwd(own, rebase, workspace)
                cwds[call.index] = decided
                if _root_form(own) != root:  # shown only where the session moved
                    noted.append(("cwd", own, str(decided)))
            if rebase is not None:
                call, done = _rebased_call(call, rebase)
                noted.extend(done)
            if noted:
                changes[call.index] = tuple(noted)
            calls.append(call)
        turns.append(dataclasses.replace(turn, calls=tuple(calls)))
    return RebasedPlan(dataclasses.replace(plan, turns=tuple(turns)), cwds, changes)


def _root_form(own: str) -> str:
    """A recorded cwd as :func:`usable_root` writes a root (to tell the root itself)."""
    return windows_form(own) if windows_absolute(own) else own.rstrip("/")


def _decided_cwd(own: str, rebase: Rebase | None, workspace: str) -> Path:
    """Where a call recorded in ``own`` is decided."""
    if windows_absolute(own):
        # recorded on Windows: under the recorded root it is rebased like any path; else
        # it is nowhere here, so it is decided where nothing is (outside the workspace)
        moved = rebase.path(own) if rebase is not None else None
        return Path(moved) if moved is not None else Path("/", windows_form(own))
    if not own.startswith("/"):
        # relative to the project (Gemini's directory): below the workspace (a ".." is
        # kept, and is resolved there: outside the workspace)
        return Path(workspace) / own
    moved = rebase.path(own.rstrip("/") or "/") if rebase is not None else None
    return Path(moved if moved is not None else own)


def _rebased_call(call: Call, rebase: Rebase) -> tuple[Call, list[Change]]:
    if isinstance(call.params, InvalidInput):
        return call, []  # it never runs: shown as recorded
    data, done = rebase.call_input(call.tool, call.input)
    if not done:
        return call, []
    # Only string fields that validated change, to other strings: the validated input is
    # updated as it is (validating every call again cost more than the rest of the rebase).
    update = {c.field: c.rebased for c in done}
    params = call.params
    try:
        if isinstance(params, Params):
            spec = spec_of(params)
            if update.keys() <= spec.fields.keys():
                params = spec.replaced(params, update)
            else:  # a field written under an alias: validated again
                params = spec.validate(data)
        else:  # a model (pydantic is loaded already)
            from toolrun.plan.foreign import ForeignInput

            model = type(params)
            if model is not ForeignInput and not update.keys() <= model.model_fields.keys():
                params = validate(model, data)
            else:
                params = params.model_copy(update=update)
    except Invalid:
        return call, []  # kept as recorded: decided as outside the workspace
    # built directly: dataclasses.replace was a fifth of the time of a rebase
    changed = Call(
        call.index, call.turn, call.id, call.tool, data, params, call.timeout, call.location
    )
    return changed, [(c.field, c.recorded, c.rebased) for c in done]
