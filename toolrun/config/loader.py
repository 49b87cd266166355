"""Finding, reading and merging configuration sources (design §3).

Precedence, highest first: managed settings, command-line flags and ``--settings``
files (the last one given wins a scalar), toolrun.yaml, then Claude Code's local
(``.claude/settings.local.json``) and project (``.claude/settings.json``) settings of
the workspace, read always (a project's own rules are never skipped silently), and the
user's ``~/.claude/settings.json``, read only with ``loadClaudeSettings`` (CI runs stay
reproducible; found and not read, it is a warning naming it). Rule and hook lists merge
across all sources; a scalar comes from the highest source that sets it.

The parts, each a module: :mod:`~toolrun.config.sources` reads one source,
:mod:`~toolrun.config.checks` and :mod:`~toolrun.config.examples` check what it says,
:mod:`~toolrun.config.merge` (and :mod:`~toolrun.config.merge_toolrun` for the ``toolrun:``
section) merge the sources; :func:`load_config` here puts them in order.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from toolrun.config.checks import (
    _check_bypass,
    _check_hooks,
    _check_network,
    _check_rules,
    _check_verifiers,
)
from toolrun.config.examples import _collect_examples
from toolrun.config.merge import _merge
from toolrun.config.merge_toolrun import (
    MAX_CONCURRENCY_ENV,
    _env_max_concurrency,
    _managed_enforce,
)
from toolrun.config.models import ENFORCE, MODE_ALIASES, PERMISSION_MODES, Config, SourceKind
from toolrun.config.sources import (
    CONFIG_NAMES,
    MANAGED_SETTINGS_PATH,
    _Loaded,
    _read,
    discover_config,
)
from toolrun.errors import ConfigError, Problem
from toolrun.paths import display_path

__all__ = [
    "CONFIG_NAMES",
    "MANAGED_SETTINGS_ENV",
    "MANAGED_SETTINGS_PATH",
    "MAX_CONCURRENCY_ENV",
    "STRICT_ENV",
    "discover_config",
    "load_config",
]

_log = logging.getLogger("toolrun.config")
#: the environment's spelling of ``--managed-settings`` and ``--strict`` (every command reads
#: them, exec and explain-permission included)
MANAGED_SETTINGS_ENV = "TOOLRUN_MANAGED_SETTINGS"
STRICT_ENV = "TOOLRUN_STRICT"


def load_config(
    *,
    workspace: Path | str = ".",
    config_file: Path | None = None,
    settings_files: Sequence[Path] = (),
    mode: str | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    strict: bool = False,
    managed_settings: Path | None = None,
    managed_path: Path = MANAGED_SETTINGS_PATH,
    enforce: str | None = None,
) -> Config:
    """Read every source that applies and merge them; ConfigError lists every problem.

    ``strict`` (or ``toolrun.strict: true`` in any source) makes every config warning an
    error. ``managed_settings`` is read always; ``managed_path`` (Claude Code's managed
    settings file) only with ``loadClaudeSettings``. ``enforce`` (``--enforce``) overrides
    ``toolrun.enforce`` of every source but managed settings.
    """
    env = os.environ if env is None else env
    ws = Path(workspace).expanduser().resolve()
    if not ws.is_dir():
        raise ConfigError([Problem(None, "", f"workspace {display_path(ws)} is not a directory")])
    if mode is not None and mode not in PERMISSION_MODES and mode not in MODE_ALIASES:
        raise ConfigError(
            [
                Problem(
                    None,
                    "--mode",
                    f"unknown mode {mode!r}; one of {', '.join((*PERMISSION_MODES, 'auto'))}",
                )
            ]
        )
    if enforce is not None and enforce not in ENFORCE:
        raise ConfigError([Problem(None, "--enforce", f"unknown value {enforce!r}; one of "
                                   f"{', '.join(ENFORCE)}")])

    problems: list[Problem] = []
    loaded: list[_Loaded] = []
    if managed_settings is None and env.get(MANAGED_SETTINGS_ENV):
        managed_settings = Path(env[MANAGED_SETTINGS_ENV])
    strict = strict or env.get(STRICT_ENV, "").lower() in ("1", "true", "yes")
    if managed_settings is not None:
        item = _read(
            SourceKind.MANAGED, managed_settings, managed_settings.resolve().parent, problems
        )
        if item is not None:
            loaded.append(item)
    # --settings: the last one given has the highest precedence.
    for path in reversed(settings_files):
        item = _read(SourceKind.SETTINGS, path, path.resolve().parent, problems)
        if item is not None:
            loaded.append(item)
    toolrun_file = config_file if config_file is not None else discover_config(ws)
    if toolrun_file is not None:
        item = _read(SourceKind.TOOLRUN, toolrun_file, toolrun_file.resolve().parent, problems)
        if item is not None:
            loaded.append(item)

    load_claude = next(
        (
            s.spec.toolrun.loadClaudeSettings
            for s in loaded
            if s.spec.toolrun is not None and s.spec.toolrun.loadClaudeSettings is not None
        ),
        False,
    )
    home_dir = home if home is not None else Path(env.get("HOME") or Path.home())
    if managed_settings is None and managed_path.is_file():
        item = _read(SourceKind.MANAGED, managed_path, managed_path.parent, problems)
        if item is not None:
            loaded.insert(0, item)
    unloaded: list[Path] = []
    for kind, path, root in (
        (SourceKind.LOCAL, ws / ".claude" / "settings.local.json", ws),
        (SourceKind.PROJECT, ws / ".claude" / "settings.json", ws),
        (SourceKind.USER, home_dir / ".claude" / "settings.json", home_dir / ".claude"),
    ):
        if not path.is_file() or any(path.samefile(i.path) for i in loaded):
            continue  # a file given as --config or --settings is read once, as given
        if kind is SourceKind.USER and not load_claude:
            unloaded.append(path)
            continue
        item = _read(kind, path, root, problems)
        if item is not None:
            loaded.append(item)

    warned: list[Problem] = []
    for item in loaded:
        _check_rules(item, problems, warned)
        _check_hooks(item, problems, warned)
        _check_verifiers(item, problems)
        _check_network(item, problems)
        problems.extend(item.keys.errors)
        warned.extend(item.keys.warnings)
        warned.extend(item.keys.restricting)
    examples = _collect_examples(loaded, problems)
    strict = strict or any(s.spec.toolrun is not None and s.spec.toolrun.strict for s in loaded)
    if strict:  # every warning is an error: the message as is, with where it was written
        problems.extend(
            Problem(w.location, w.path, w.message.removeprefix("warning: ")) for w in warned
        )
    if problems:
        raise ConfigError(problems)
    config = _merge(ws, loaded, mode, _env_max_concurrency(env), home_dir)
    if enforce is not None and not _managed_enforce(loaded):
        config = replace(config, toolrun=replace(config.toolrun, enforce=enforce))
    _check_bypass(config, loaded, examples)
    warnings = [
        str(w if w.message.startswith("warning: ") else replace(w, message=f"warning: {w.message}"))
        for w in warned
    ]
    warnings.extend(_unloaded_warning(p, home_dir) for p in unloaded)
    ignored = tuple(dict.fromkeys(k for item in loaded for k in item.keys.ignored))
    if ignored:
        warnings.append(
            f"ignored: {', '.join(ignored)} (Claude Code settings toolrun does not enforce)"
        )
    warnings.extend(config.policy_notes)  # so that explain-permission and check say so
    for warning in warnings:  # the CLI shows these on stderr (toolrun.cli installs a handler)
        _log.warning("%s", warning)
    return replace(
        config,
        warnings=tuple(warnings),
        ignored=ignored,
        examples=examples,
        unloaded=tuple(unloaded),
    )


def _unloaded_warning(path: Path, home: Path) -> str:
    """A settings file found and not read: said, so that no one takes its rules as checked.
    (Not an error under --strict: reading it is a choice, not a mistake in a file.)"""
    shown = f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
    return (
        f"warning: {shown} (Claude Code user settings) was not loaded: its rules and hooks "
        "are not checked; user settings load only with toolrun.loadClaudeSettings: true, "
        "so that CI runs stay reproducible"
    )
