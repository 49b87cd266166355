"""The check command as a library function: many inputs decided, nothing executed.

Every call of every input goes through the executor in dry-run mode, the one decision path
``exec`` uses (permission engine, PreToolUse hooks, partition into runs); ``check`` only
records what it decided, compactly, so that 100,000 calls fit in a small budget.

With ``jobs > 1`` inputs are checked in worker processes (spawned: the functions they run
are top-level, and what they return is plain JSON-able data); reports keep input order.
One big input is split by turns between forked processes instead (``toolrun.commands.
split_check``), forked before it is loaded so that each holds only its own turns:
automatically for a JSON plan of many calls on a machine of more than one core.

This module runs a check from end to end; its steps are their own modules: collecting
and loading the inputs (``check_inputs``), deciding a plan (``check_decide``), splitting
one across processes (``check_parts`` before it is loaded, ``split_check`` after), and
the report it returns (:mod:`toolrun.report`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.commands.check_decide import (
    CheckOptions,
    CheckState,
    decide_plan,
    interrupts_raise,
    state_of,
)
from toolrun.commands.check_inputs import expand_inputs, load_plan
from toolrun.commands.check_parts import (
    PartInvalid,
    decided_parts,
    end_parts,
    fork_early,
    plan_parts,
    plan_problems,
)
from toolrun.errors import PlanError, Problem
from toolrun.paths import display_path
from toolrun.report.models import FAIL_ON, CheckReport, PlanCheck

if TYPE_CHECKING:
    from toolrun.commands.check_parts import Part
    from toolrun.plan.models import Turn
    from toolrun.policy.diff import PolicyDiff
    from toolrun.report.shards import Shard


@dataclass(frozen=True, slots=True)
class CheckRequest:
    inputs: Sequence[str]  # files or glob patterns
    workspace: Path = Path(".")
    config_file: Path | None = None
    settings_files: Sequence[Path] = ()
    mode: str | None = None
    enforce: str | None = None  # --enforce; None: the config's toolrun.enforce
    source_format: str | None = None  # --from; None: detect each input
    # --transcript-cwd: the directory the inputs were recorded in (mapped onto the
    # workspace); None: the cwd a transcript records, if any
    transcript_cwd: str | None = None
    # --allow-empty: an input without calls (or of no format toolrun reads) is not invalid
    allow_empty: bool = False
    hooks: bool = True
    # processes; None: automatic (one JSON plan of SPLIT_MIN_CALLS calls or more is split
    # between two processes when the machine has two cores or more)
    jobs: int | None = 1
    fail_on: str = "deny"
    # --strict: config warnings, and a session log's unreadable records, are errors
    strict: bool = False
    managed_settings: Path | None = None
    shard: Shard | None = None  # --shard K/N: only the inputs of that shard
    # mark an allow an earlier call of its plan may change (``depends on call-N``); a
    # policy diff compares rules, not what the plan's order makes of them
    marks: bool = True


def check_input(options: CheckOptions, shown: str, path: str | None) -> dict[str, Any]:
    """Load and decide one input; plain data back (the worker-process entry point)."""
    return _check(options, shown, None if path is None else Path(path)).to_json()


@contextlib.contextmanager
def _batch_gc() -> Iterator[None]:
    """No cyclic garbage collection while one input is loaded and decided.

    A big plan is a few hundred thousand objects that all stay alive until the input is
    done; each collection would walk all of them again for nothing (it was 40% of the time
    of a 100,000-call check). Checking makes little cyclic garbage, collected afterwards.

    What survives the input (its report, the memos) is long-lived: it is moved to the
    oldest generation as it is (freeze, unfreeze) rather than walked by the first young
    collection after, which took half a second after 100,000 calls.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


def _check(options: CheckOptions, shown: str, path: Path | None) -> PlanCheck:
    with _batch_gc():
        try:
            return _check_input(options, shown, path)
        except Exception as exc:  # noqa: BLE001 - one input must not end the check of the others
            return _unchecked(shown, exc)


def _unchecked(shown: str, exc: BaseException) -> PlanCheck:
    """An input that toolrun failed on: reported as invalid (exit 3), never as decided."""
    message = f"{shown}: could not be checked ({type(exc).__name__}: {exc}); please report it"
    return PlanCheck(shown, problems=(Problem(None, "", message),))


def _check_input(options: CheckOptions, shown: str, path: Path | None) -> PlanCheck:
    started = time.perf_counter()
    if path is None:
        what = (
            "this folder holds no plan or session toolrun reads"
            if os.path.isdir(os.path.expanduser(shown))
            else "no file matches this pattern"
        )
        return PlanCheck(shown, problems=(Problem(None, "", f"{shown}: {what}"),))
    state = state_of(options)
    children: list[tuple[int, int]] = []  # the part processes: (pid, read end)
    try:
        part = fork_early(options, state, shown, path, children)
        return _check_loaded(options, state, shown, path, started, part, children)
    finally:
        end_parts(children)


def _check_loaded(
    options: CheckOptions,
    state: CheckState,
    shown: str,
    path: Path,
    started: float,
    part: Part | None,
    children: list[tuple[int, int]],
) -> PlanCheck:
    try:
        imported = load_plan(options, state, shown, path, part)
    except PlanError as exc:
        problems = exc.problems
        if part is not None and not part.validate:  # its own part's: the whole plan's now
            problems = plan_problems(options, state, shown, path, children)
            if not problems:  # a YAML part unlike its outline (REGION_UNSURE): one process
                return _check_loaded(options, state, shown, path, started, None, children)
        return PlanCheck(shown, problems=problems, wall_ms=(time.perf_counter() - started) * 1000)
    if part is not None and part.spans is None:
        end_parts(children)  # not a toolrun plan: its parts were never chosen
        part = None
    from toolrun.plan.recorded import rebase_plan

    rebased = rebase_plan(imported, str(state.config.workspace), options.transcript_cwd)
    fmt, warnings, marks = imported.format, imported.warnings, imported.marks
    name, file, changes = rebased.plan.name, rebased.plan.file, rebased.changes
    turns: list[Turn | None] = list(rebased.plan.turns)
    state.decider.cwds = rebased.cwds
    # from here on ``turns`` holds the only reference to the calls: each turn is let go
    # once decided (the calls and their validated inputs are most of a big plan's memory)
    del imported, rebased
    try:
        # (--jobs N splits what was loaded whole; automatic splits only before loading)
        parts = plan_parts(options.split, turns) if state.hooks is None and options.split else 1
        if part is not None:
            decide = partial(decide_plan, state, options.run_id, file, rebased=changes, marks=marks)
            try:
                runs, calls = decided_parts(
                    options, state, shown, path, part, children, decide, turns
                )
            except PartInvalid:
                problems = plan_problems(options, state, shown, path, children)
                if not problems:  # a YAML part unlike its outline (REGION_UNSURE): one process
                    return _check_loaded(options, state, shown, path, started, None, children)
                return PlanCheck(
                    shown, problems=problems, wall_ms=(time.perf_counter() - started) * 1000
                )
        elif parts > 1:
            from toolrun.commands.split_check import decide_in_parts

            runs, calls = decide_in_parts(
                partial(decide_plan, state, options.run_id, file, rebased=changes, marks=marks),
                turns,
                parts,
                lambda: state.decider.plan.writers,
            )
        else:
            runs, calls = decide_plan(state, options.run_id, file, turns, changes, marks)
    finally:
        state.decider.cwds = {}
    return PlanCheck(
        file=shown,
        format=fmt,
        name=name,
        turns=len(turns),
        runs=runs,
        calls=calls,
        wall_ms=(time.perf_counter() - started) * 1000,
        warnings=warnings,
    )


def check(
    request: CheckRequest, *, on_plan: Callable[[PlanCheck], None] | None = None
) -> CheckReport:
    """Check every input (ConfigError: nothing can be decided); ``on_plan`` gets each
    input's result in input order, as soon as it and every earlier one are done."""
    from toolrun.execution.journal import new_run_id

    if request.fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {FAIL_ON}, not {request.fail_on!r}")
    started = time.perf_counter()
    options = CheckOptions(
        workspace=str(request.workspace),
        config_file=str(request.config_file) if request.config_file else None,
        settings_files=tuple(str(f) for f in request.settings_files),
        mode=request.mode,
        enforce=request.enforce,
        hooks=request.hooks,
        source_format=request.source_format,
        run_id=new_run_id(),
        transcript_cwd=request.transcript_cwd,
        strict=request.strict,
        managed_settings=str(request.managed_settings) if request.managed_settings else None,
        split=1 if request.jobs is not None and request.jobs <= 1 else request.jobs or 0,
        marks=request.marks,
        allow_empty=request.allow_empty,
    )
    state = state_of(options)  # an invalid config stops everything here
    _check_examples(state)
    warnings = state.config.warnings
    inputs = expand_inputs(request.inputs)
    shard = request.shard
    if shard is not None:
        from toolrun.report.shards import select

        shard, inputs = select([shown for shown, _ in inputs], inputs, shard)
    done: list[PlanCheck] = []
    # several inputs: one process each (--jobs); one input: its turns split (options.split)
    jobs = 1 if request.jobs is None else min(request.jobs, len(inputs))

    def deliver(plan: PlanCheck) -> None:
        done.append(plan)
        if on_plan is not None:
            on_plan(plan)

    with interrupts_raise():  # (SIGTERM too: the parts it forks are ended, not left)
        if jobs <= 1:
            for shown, path in inputs:
                deliver(_check(options, shown, path))
        else:
            _check_in_processes(options, inputs, jobs, deliver)
    return CheckReport(
        run_id=options.run_id,
        fail_on=request.fail_on,
        plans=tuple(done),
        wall_ms=(time.perf_counter() - started) * 1000,
        config_warnings=warnings,
        config_notes=state.config.notes,
        config_files=tuple(display_path(f) for f in state.config.files),
        config_digest=_config_digest(state.config.files) if shard is not None else "",
        shard=shard,
    )


def _config_digest(files: Sequence[Path]) -> str:
    from toolrun.report.shards import files_digest

    return files_digest([(display_path(f), f) for f in files])


def compare(
    request: CheckRequest,
    *,
    config_file: Path | None = None,
    settings_files: Sequence[Path] | None = None,
    on_plan: Callable[[PlanCheck], None] | None = None,
) -> PolicyDiff:
    """Decide every call under the request's config and under the new one (``config_file``
    instead of the toolrun.yaml, ``settings_files`` instead of the --settings files); the
    calls whose decision changes. ``request.fail_on``: ``loosen`` or ``never``."""
    from toolrun.policy.diff import diff_reports

    if request.fail_on not in ("loosen", "never"):
        raise ValueError(f"a policy diff fails on loosen or never, not {request.fail_on!r}")
    base = check(replace(request, fail_on="never", marks=False), on_plan=on_plan)
    new = check(
        replace(
            request,
            fail_on="never",
            marks=False,
            config_file=config_file if config_file is not None else request.config_file,
            settings_files=settings_files if settings_files else request.settings_files,
        )
    )
    return diff_reports(
        base,
        new,
        base_label=", ".join(base.config_files) or "no config",
        new_label=", ".join(new.config_files) or "no config",
        fail_on=request.fail_on,
    )


def _check_examples(state: CheckState) -> None:
    """The config's rule self-tests: a failing one is an invalid config (exit 3)."""
    from toolrun.errors import ConfigError
    from toolrun.policy.examples import check_examples

    failed = check_examples(state.config, state.registry)
    if failed:
        raise ConfigError(failed)


def _check_in_processes(
    options: CheckOptions,
    inputs: Sequence[tuple[str, Path | None]],
    jobs: int,
    deliver: Callable[[PlanCheck], None],
) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from toolrun.commands.split_check import end_workers, in_worker, worker_start

    context = multiprocessing.get_context("spawn")
    options = replace(options, split=1)  # a process per input: none splits its input
    pool = ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=worker_start, initargs=(os.getpid(),)
    )
    try:
        futures = [
            pool.submit(
                in_worker, check_input, options, shown, str(path) if path is not None else None
            )
            for shown, path in inputs
        ]
        for (shown, _), future in zip(inputs, futures, strict=True):
            # input order, each as soon as the earlier ones are in
            try:
                plan = PlanCheck.from_json(future.result())
            except Exception as exc:  # noqa: BLE001 - a worker that died: that input only
                plan = _unchecked(shown, exc)
            deliver(plan)
    except BaseException:
        # Ctrl-C, SIGTERM: the workers are stopped now, not waited for (the pool's shutdown
        # waited for each to finish its input: a minute of a big check after Ctrl-C)
        workers = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)  # (no next input for any of them)
        end_workers(workers)
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)
