"""The validate command as a library function."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolrun.errors import ConfigError, ExitCode, PlanError, Problem
from toolrun.paths import display_path


@dataclass(frozen=True, slots=True)
class ValidateReport:
    ok_lines: tuple[str, ...]
    problems: tuple[Problem, ...]
    invalid_files: int
    # every plan given, in order: (file as shown, turns, calls), or (file, None, None) if invalid
    files: tuple[tuple[str, int | None, int | None], ...] = ()
    # what loads but is not as recorded: a session's skipped records, a recorded call its
    # tool refused (it gets an error result when replayed)
    warnings: tuple[Problem, ...] = ()
    #: the config files read, as shown (empty also when the config is invalid)
    sources: tuple[str, ...] = ()

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.INVALID if self.problems else ExitCode.OK

    @property
    def summary(self) -> str:
        n = len(self.problems)
        files = self.invalid_files
        return (
            f"{n} problem{'s' if n != 1 else ''} in {files} file{'s' if files != 1 else ''}; "
            "nothing was executed"
        )


def validate_plans(
    plans: Sequence[Path],
    *,
    workspace: Path | str = ".",
    config_file: Path | None = None,
    settings_files: Sequence[Path] = (),
    mode: str | None = None,
    strict: bool = False,
    managed_settings: Path | None = None,
    source_format: str | None = None,
    allow_empty: bool = False,
) -> ValidateReport:
    """Validate the config and each plan; every problem of every file is collected."""
    from toolrun.config import load_config
    from toolrun.plan.importers import load_input
    from toolrun.plan.models import MAX_CALLS_PER_TURN, InvalidInput
    from toolrun.tools import default_registry

    problems: list[Problem] = []
    ok: list[str] = []
    files: list[tuple[str, int | None, int | None]] = []
    warnings: list[Problem] = []
    invalid = 0
    sources: tuple[str, ...] = ()
    registry = default_registry()
    per_turn = MAX_CALLS_PER_TURN  # when the config is invalid, its problems are listed too
    try:
        config = load_config(
            workspace=workspace,
            config_file=config_file,
            settings_files=settings_files,
            mode=mode,
            strict=strict,
            managed_settings=managed_settings,
        )
        if config.mcp_servers:
            from toolrun.tools.mcp import register_mcp_tools

            register_mcp_tools(config, registry)  # so that mcp__server__tool calls validate
        per_turn = config.toolrun.max_calls_per_turn
        sources = config.sources()
        from toolrun.policy.examples import check_examples

        failed = check_examples(config, registry)  # rule self-tests: the rules as meant
        problems.extend(failed)
        invalid += len({p.location.file if p.location else p.path for p in failed})
    except ConfigError as exc:
        problems.extend(exc.problems)
        invalid += len({p.location.file if p.location else p.path for p in exc.problems})
    from toolrun.plan.discover import files_in

    # a folder: the plans and sessions in it (as `check DIR`); a file named outright is read
    named: list[Path] = []
    for given in plans:
        found = list(files_in(given)) if given.is_dir() else [given]
        if not found:
            problems.append(
                Problem(None, "", f"{display_path(given)}: this folder holds no plan or session "
                        "toolrun reads")
            )  # fmt: skip
            invalid += 1
        named.extend(found)
    for path in named:
        shown = display_path(path)
        try:
            # loaded as exec and check load it (a session too: --from, --allow-empty)
            imported = load_input(
                path,
                registry,
                display=shown,
                source_format=source_format,
                max_calls_per_turn=per_turn,
                strict=strict,
                allow_empty=allow_empty,
            )
        except PlanError as exc:
            problems.extend(exc.problems)
            invalid += 1
            files.append((shown, None, None))
            continue
        plan = imported.plan
        warnings.extend(imported.warnings)
        warnings.extend(
            Problem(c.location, "", f"{c.id}: {c.params.message} (replayed, it is an error)")
            for c in plan.calls
            if isinstance(c.params, InvalidInput)
        )
        calls = len(plan)
        turns = len(plan.turns)
        files.append((shown, turns, calls))
        ok.append(
            f"{shown}: ok ({turns} turn{'s' if turns != 1 else ''}, "
            f"{calls} call{'s' if calls != 1 else ''})"
        )
    return ValidateReport(
        tuple(ok), tuple(problems), invalid, tuple(files), tuple(warnings), sources
    )
