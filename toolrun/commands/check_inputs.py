"""What ``toolrun check`` reads: its arguments expanded to files, and each one loaded.

Files, folders and glob patterns (``**`` and a leading ``~`` included) become (shown
name, path) pairs in order, each file once; a Claude Code session's subagent logs go with
the session. Each input is
loaded by the importer registry (:func:`toolrun.plan.importers.load_input`), whole or
(a part of a split plan) only the turns of one part.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from toolrun.paths import display_path

if TYPE_CHECKING:
    from toolrun.commands.check_decide import CheckOptions, CheckState
    from toolrun.commands.check_parts import Part
    from toolrun.plan.importers import Imported


_MAGIC = frozenset("*?[")


CONFIG_NAMES = ("toolrun.yaml", "toolrun.yml")


def expand_inputs(inputs: Sequence[str]) -> list[tuple[str, Path | None]]:
    """Files, folders and glob patterns (``**`` and a leading ``~`` included) to (shown
    name, path) in order, each file once; a pattern that matches no file (or a folder that
    holds no plan or session) is kept with path None."""
    from toolrun.plan.discover import files_in

    out: list[tuple[str, Path | None]] = []
    seen: set[str] = set()
    for given in inputs:
        # `~` as the shell would expand it, also inside a quoted glob ('~/.claude/**/*.jsonl')
        arg = os.path.expanduser(given) if given.startswith("~") else given
        if os.path.isdir(arg):
            # a folder: the plans and sessions in it, as ruff and pytest recurse
            matches = [str(p) for p in files_in(Path(arg))]
            if not matches:
                out.append((given, None))
                continue
        elif _MAGIC.isdisjoint(arg) or os.path.exists(arg):
            matches = [arg]
        else:
            # A toolrun.yaml beside the plans is their config, not a plan: a glob skips it
            # (naming it outright still checks it).
            matches = sorted(
                m
                for m in glob.glob(arg, recursive=True)
                if os.path.isfile(m) and os.path.basename(m) not in CONFIG_NAMES
            )
            if not matches:
                out.append((given, None))
                continue
        for match in matches:
            shown = display_path(match)
            if shown not in seen:
                seen.add(shown)
                out.append((shown, Path(match)))
    return _without_subagent_logs(out)


def _without_subagent_logs(
    inputs: list[tuple[str, Path | None]],
) -> list[tuple[str, Path | None]]:
    """Inputs less the subagent logs of a Claude Code session that is an input too
    (``S/subagents/*.jsonl`` beside ``S.jsonl``): the session reads them as its own turns."""
    sessions = {str(p.with_suffix("")) for _, p in inputs if p is not None and p.suffix == ".jsonl"}
    return [
        (shown, p)
        for shown, p in inputs
        if p is None or p.parent.name != "subagents" or str(p.parent.parent) not in sessions
    ]


def load_plan(
    options: CheckOptions, state: CheckState, shown: str, path: Path, select: Part | None = None
) -> Imported:
    from toolrun.plan.importers import load_input

    return load_input(
        path,
        state.registry,
        display=shown,
        source_format=options.source_format,
        max_calls_per_turn=state.config.toolrun.max_calls_per_turn,
        strict=options.strict,
        select=select,
        allow_empty=options.allow_empty,
    )

