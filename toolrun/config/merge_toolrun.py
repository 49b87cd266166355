"""The ``toolrun:`` section merged across sources: its scalars from the highest source
that sets them (``TOOLRUN_MAX_CONCURRENCY`` between ``--settings`` files and toolrun.yaml),
managed settings' ``enforce`` that no flag changes, and ``autoVerify`` verifiers by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from toolrun.config.models import SettingSource, SourceKind, ToolrunSettings, Verifier
from toolrun.config.sources import _Loaded, _verifiers
from toolrun.errors import ConfigError, Problem

MAX_CONCURRENCY_ENV = "TOOLRUN_MAX_CONCURRENCY"


def _env_max_concurrency(env: Mapping[str, str]) -> int | None:
    raw = env.get(MAX_CONCURRENCY_ENV)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(
            [Problem(None, MAX_CONCURRENCY_ENV, f"must be a positive integer, not {raw!r}")]
        )
    return value


def _merge_toolrun(loaded: list[_Loaded], env_concurrency: int | None) -> ToolrunSettings:
    sections = [(i.kind, i.spec.toolrun) for i in loaded if i.spec.toolrun is not None]

    def pick(key: str, *, kinds: tuple[SourceKind, ...] = tuple(SourceKind)) -> Any:
        for kind, section in sections:
            if kind in kinds and getattr(section, key) is not None:
                return getattr(section, key)
        return None

    defaults = ToolrunSettings()
    # TOOLRUN_MAX_CONCURRENCY sits between --settings files and toolrun.yaml.
    max_concurrency = pick("maxConcurrency", kinds=(SourceKind.CLI, SourceKind.SETTINGS))
    if max_concurrency is None:
        max_concurrency = env_concurrency if env_concurrency is not None else pick("maxConcurrency")
    kind_limits = pick("kindLimits")
    return ToolrunSettings(
        max_concurrency=max_concurrency or defaults.max_concurrency,
        kind_limits=MappingProxyType(dict(kind_limits or {})),
        max_calls_per_turn=pick("maxCallsPerTurn") or defaults.max_calls_per_turn,
        sibling_abort_on_bash_error=bool(pick("siblingAbortOnBashError")),
        hook_timeout=pick("hookTimeout") or defaults.hook_timeout,
        hook_failure=pick("hookFailure") or defaults.hook_failure,
        load_claude_settings=bool(pick("loadClaudeSettings")),
        max_stored_output=_or_default(pick("maxStoredOutput"), defaults.max_stored_output),
        enforce=pick("enforce") or defaults.enforce,
    )


def _managed_enforce(loaded: list[_Loaded]) -> bool:
    """Managed settings set toolrun.enforce: no flag loosens (or changes) it."""
    return any(
        i.kind is SourceKind.MANAGED and i.spec.toolrun is not None
        and i.spec.toolrun.enforce is not None
        for i in loaded
    )


def _or_default(value: int | None, default: int) -> int:
    return default if value is None else value  # 0 is a value: store no whole outputs


def _merge_verifiers(
    loaded: list[_Loaded], hooks_lock: SettingSource | None, notes: list[str]
) -> tuple[Verifier, ...]:
    """Every source's ``toolrun.autoVerify``, highest first; a name given again in a lower
    source is that source's older version of the same verifier: not used. Verifier
    commands run unasked, as hook commands do: ``allowManagedHooksOnly`` keeps only the
    managed ones."""
    out: dict[str, Verifier] = {}
    for item in loaded:
        section = item.spec.toolrun
        specs = _verifiers(section)
        if specs and hooks_lock is not None and item.kind is not SourceKind.MANAGED:
            n = len(specs)
            notes.append(
                f"allowManagedHooksOnly ({hooks_lock}): {n} autoVerify verifier"
                f"{'s' if n != 1 else ''} from {item.doc.file} not used"
            )
            continue
        for v, spec in enumerate(specs):
            out.setdefault(
                spec.name,
                Verifier(
                    name=spec.name,
                    files=tuple(spec.files),
                    command=spec.command,
                    format=spec.format,
                    timeout=spec.timeout,
                    block=spec.block,
                    source=item.source(("toolrun", "autoVerify", v)),
                ),
            )
    return tuple(out.values())
