"""Bookkeeping of calls: execution ids, the journal's ``started`` record of a call about to
launch, where a call's whole output is stored, and the results themselves: what a result
holds of its call, its decision and timing, where it ran (jail, sandbox), the partition a
dry run shows and what PreToolUse and PostToolUse* hooks add to it.
"""

from __future__ import annotations

import json
import os
import random
import uuid
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.execution.delivery import _Delivery
from toolrun.execution.invocation import Outcome
from toolrun.execution.jailing import JailKeeper
from toolrun.execution.journal import stored_outputs_dir
from toolrun.execution.plan_state import _PlanState
from toolrun.execution.results import (
    JAIL_PLACES,
    CallDecision,
    DecidedBy,
    Result,
    Status,
    encode_json,
    utc_iso,
    where_it_runs,
)
from toolrun.execution.settings import ExecSettings
from toolrun.plan.models import Call
from toolrun.stored import OutputStore

if TYPE_CHECKING:
    from toolrun.execution.hook_events import HookStops
    from toolrun.execution.journal import Journal
    from toolrun.hooks import PostToolResult, PreToolUseResult
    from toolrun.sandbox.policy import SandboxPolicy

class _Bookkeeping(_Delivery):
    """Making each call's result and journalling its start (above the delivery)."""

    settings: ExecSettings
    run_id: str
    jails: JailKeeper
    interrupted: bool
    #: a hook's ``continue: false`` (or a PostToolBatch block): nothing more starts
    stops: HookStops
    _sandbox: SandboxPolicy | None
    # the journal whose stored-outputs folder was worked out, and the folder
    _stored_dir: tuple[Journal | None, Path]
    #: a dry run's results say which run each call was part of (exec --dry-run shows it;
    #: check records the runs itself and never reads a result's metadata for them)
    _places_runs = True

    def _output_store(self, execution_id: str) -> OutputStore | None:
        """Where a call's whole output may go: beside the journal, so none without one."""
        journal = self.journal
        if journal is None:
            return None
        if self._stored_dir[0] is not journal:
            self._stored_dir = (journal, stored_outputs_dir(journal.path))
        return OutputStore(
            self._stored_dir[1], self.run_id, execution_id, self.settings.max_stored_output
        )

    def _journal_start(
        self, state: _PlanState, call: Call, execution_id: str, started: float, *,
        now: bool = True, soon: bool = False,
    ) -> None:
        """A call is about to launch: after a crash the journal tells it apart from calls
        that never started (those had no effects; this one may have). ``now=False``: with
        the tick's records (the caller ticks before the launch; or the call, a read, has
        run already and its result follows). ``soon``: at the next tick, which is asked
        for (a call that can have no effects: it need not wait for the write)."""
        if self.journal is None:
            return
        line = started_line(self.run_id, state.plan.file, call, execution_id, started)
        if now:  # the results waiting for this tick go with it, in the one write
            self.journal.write_line(line)
            return
        self.journal.add(line)
        if soon:
            self._tick_soon()

    def _outcome_result(
        self,
        state: _PlanState,
        call: Call,
        decision: CallDecision,
        execution_id: str,
        outcome: Outcome,
        queued: float,
        store: OutputStore | None,
        post: PostToolResult | None,
    ) -> Result:
        metadata = outcome.metadata
        if store is not None:
            # a call that timed out or failed keeps what it printed too
            stored = store.record()
            if stored:  # (most calls store nothing: their metadata as it is)
                metadata = {**metadata, **stored}
        started, finished = outcome.started_at, outcome.finished_at
        where = why = None
        if call.tool == "Bash":  # where it ran: what the jail and the sandbox recorded
            if decision.jail is not None and "jail" not in metadata:
                # meant for a jail of a kind the run made none of: it ran as configured
                unjailed = f"toolrun does not make {decision.jail} jails"
                metadata = {**metadata, "jail": {"kind": decision.jail, "enforced": False,
                                                 "reason": unjailed}}  # fmt: skip
            where, why = where_it_runs(decision, metadata)
        # built directly, in field order (no dict of keyword fields as _result takes): most
        # calls have no hook to add to it (test_journal_records pins it to _result's)
        made = Result(
            call.index, call.id, execution_id, self.run_id, state.plan.file, call.tool,
            call.input, decision.decision, decision.decided_by, outcome.status,
            outcome.output, outcome.error, started, finished,
            (started - queued) * 1000, (finished - started) * 1000, outcome.attempts,
            False, call.location, metadata, runs_in=where, runs_in_why=why,
        )
        return self._completed(state, call, made, post)

    def _dry_place(
        self, call: Call, decision: CallDecision, metadata: Mapping[str, Any] | None
    ) -> tuple[Mapping[str, Any] | None, str | None, str | None]:
        """A Bash call that did not run: its ``metadata`` with the jail it would lack (a
        dry run, as exec's result of it says: it would run unjailed), and where it would
        run and why (:func:`where_it_runs`)."""
        no_jail = self._no_jail(call, decision)
        if no_jail is not None:
            jail = {"kind": decision.jail, "enforced": False, "reason": no_jail}
            metadata = {**(metadata or {}), "jail": jail}
        return (metadata, *where_it_runs(decision, metadata))

    def _no_jail(self, call: Call, decision: CallDecision) -> str | None:
        """A dry run: why no jail can be made here for a call meant for one (None: it can)."""
        if not self.settings.dry_run or decision.runs_in not in JAIL_PLACES:
            return None
        if self.jails.kind(call, decision) is None:  # as exec would run it: as configured
            return f"toolrun does not make {decision.jail} jails"
        sandbox = self._sandbox
        return self.jails.probed(sandbox.settings.bwrap_path if sandbox else None)

    def _interrupted_before(
        self, state: _PlanState, call: Call, decision: CallDecision | None = None
    ) -> Result:
        stops = self.stops
        if stops.request is not None and not self.interrupted:  # a hook stopped the run
            return self._result(state, call, stops.decision(), Status.INTERRUPTED, **stops.fields())
        return self._result(
            state,
            call,
            decision or CallDecision("ask", "not decided", DecidedBy("interrupt")),
            Status.INTERRUPTED,
            error="interrupted before the call started",
            aborted_before_launch=True,
        )

    def _result(
        self,
        state: _PlanState,
        call: Call,
        decision: CallDecision,
        status: Status,
        *,
        post: PostToolResult | None = None,
        **fields: Any,
    ) -> Result:
        placed = self._places_runs and self.settings.dry_run and bool(state.run_place)
        if placed:  # (made with it: a replace() after was a twentieth of a check)
            fields["metadata"] = {**fields.get("metadata", {}), **state.run_place}
        if call.tool == "Bash":
            metadata, fields["runs_in"], fields["runs_in_why"] = self._dry_place(
                call, decision, fields.get("metadata")
            )
            if metadata is not None:
                fields["metadata"] = metadata
        if fields.keys() <= _PLAIN_FIELDS:
            # built in field order (a dry run's usual result: no dict of keyword fields)
            made = Result(
                call.index, call.id, new_execution_id(), self.run_id, state.plan.file,
                call.tool, call.input, decision.decision, decision.decided_by, status, "",
                fields.get("error"), None, None, 0.0, 0.0, 0, False, call.location, {}, (), (),
                None, None, (), fields.get("runs_in"), fields.get("runs_in_why"),
            )  # fmt: skip
            return self._completed(state, call, made, post, placed=placed)
        made = Result(
            index=call.index,
            id=call.id,
            execution_id=fields.pop("execution_id", None) or new_execution_id(),
            run_id=self.run_id,
            plan=state.plan.file,
            tool=call.tool,
            input=call.input,
            decision=decision.decision,
            decided_by=decision.decided_by,
            status=status,
            location=call.location,
            **fields,
        )
        return self._completed(state, call, made, post, placed=placed)

    def _completed(
        self,
        state: _PlanState,
        call: Call,
        result: Result,
        post: PostToolResult | None,
        *,
        placed: bool = False,
    ) -> Result:
        """``result`` with what a dry run, a PreToolUse rewrite and hooks add to it
        (``placed``: the dry run's place is in it already)."""
        extra: dict[str, Any] = {}
        if self._places_runs and self.settings.dry_run and state.run_place and not placed:
            # a dry run shows the partition: which run each call would have been part of
            extra["metadata"] = {**result.metadata, **state.run_place}
        pre = state.pre.pop(call.index, None) if state.pre else None
        asked = state.originals.pop(call.index, None) if state.originals else None
        if asked is not None and pre is not None:
            extra["original_input"] = asked
            extra["rewritten_by"] = _rewriters(asked, pre)
        if pre is not None or post is not None:
            extra.update(_hook_fields(pre, post, result.output))
            if "original_output" in extra:  # a PostToolUse hook replaced the output
                original = extra.pop("original_output")
                metadata = extra.get("metadata", result.metadata)
                extra["metadata"] = {**metadata, "original_output": original}
        return replace(result, **extra) if extra else result


#: the fields ``_result`` builds a result with in field order (test_bookkeeping pins it to
#: the keyword build)
_PLAIN_FIELDS = frozenset({"error", "runs_in", "runs_in_why"})


def started_record(
    run_id: str, plan: str, call: Call, execution_id: str, started: float
) -> dict[str, Any]:
    """The journal's ``started`` record of a call about to launch."""
    return {
        "event": "started",
        "run_id": run_id,
        "plan": plan,
        "index": call.index,
        "id": call.id,
        "execution_id": execution_id,
        "tool": call.tool,
        "input": dict(call.input),
        "started_at": utc_iso(started),
    }


def started_line(run_id: str, plan: str, call: Call, execution_id: str, started: float) -> str:
    """:func:`started_record` as a line of JSON, the same text ``encode_json`` gives it,
    put together from its parts (one encoder pass over a dict cost more than the
    rest of journalling a read); anything but the usual types takes the encoder."""
    index, call_id, tool, given = call.index, call.id, call.tool, call.input
    if not (
        type(index) is int
        and type(call_id) is str
        and type(tool) is str
        and type(run_id) is str
        and type(plan) is str
        and type(execution_id) is str
    ):
        return encode_json(started_record(run_id, plan, call, execution_id, started))
    at = utc_iso(started)
    return (
        f'{{"event": "started", "run_id": {_string(run_id)}, "plan": {_string(plan)}, '
        f'"index": {int.__repr__(index)}, "id": {_string(call_id)}, '
        f'"execution_id": {_string(execution_id)}, "tool": {_string(tool)}, '
        f'"input": {encode_json(given if type(given) is dict else dict(given))}, '
        f'"started_at": {"null" if at is None else _string(at)}}}'
    )


#: a string as encode_json writes it (ensure_ascii=False: this is the function it uses)
_string = json.encoder.encode_basestring


# uuid4() reads the OS entropy pool on every call (~30 us here); execution ids need
# uniqueness, not secrecy, so a generator seeded once from it does.
_ids = random.Random(uuid.uuid4().int)
# a forked copy (check's part processes) would give the parent's ids again
os.register_at_fork(after_in_child=lambda: _ids.seed(uuid.uuid4().int))


# the bits uuid.UUID(int=..., version=4) sets and clears: version 4, RFC 4122 variant
_UUID4_CLEAR = ~((0xC000 << 48) | (0xF000 << 64)) & ((1 << 128) - 1)
_UUID4_SET = (0x8000 << 48) | (4 << 76)


def new_execution_id() -> str:
    """``exec_`` and a version-4 UUID (as ``str(uuid.UUID(int=bits, version=4))``)."""
    h = f"{_ids.getrandbits(128) & _UUID4_CLEAR | _UUID4_SET:032x}"
    return f"exec_{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _hook_fields(
    pre: PreToolUseResult | None, post: PostToolResult | None, output: str
) -> dict[str, Any]:
    """What PreToolUse and PostToolUse* hooks add to a result."""
    records = [h.to_json() for h in (pre, post) if h is not None]
    context = (*(pre.additional_context if pre else ()), *(post.additional_context if post else ()))
    fields: dict[str, Any] = {"hooks": tuple(records), "additional_context": context}
    if post is not None:
        if post.blocked:
            fields["hook_feedback"] = post.reason or f"blocked by {post.decided_by}"
        if post.updated_tool_output is not None:
            new = post.updated_tool_output
            fields["output"] = new if isinstance(new, str) else json.dumps(new, ensure_ascii=False)
            fields["original_output"] = output
    return fields


def _rewriters(original: Mapping[str, Any], pre: PreToolUseResult) -> tuple[dict[str, str], ...]:
    """The hooks whose updatedInput changed the input, in the order they were applied."""
    current = dict(original)
    changed = []
    for run in pre.runs:
        if run.updated_input is not None and dict(run.updated_input) != current:
            current = dict(run.updated_input)
            changed.append({"command": run.command, "source": run.source})
    return tuple(changed)
