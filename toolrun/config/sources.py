"""Reading one configuration source: finding toolrun.yaml, the file's YAML and its NULs,
its reading by the fast path or else by the schema's models (which say what is wrong and
where), its keys checked; and :class:`_Loaded`, what the other parts take of a source:
its kind, folder, document, reading and where each of its settings was written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.config.models import SettingSource, SourceKind
from toolrun.errors import Problem
from toolrun.paths import display_path

# What reads and checks a config file (the YAML loader, the fast path) is imported by the
# first file read; the schema's pydantic models (a third of a one-call `toolrun exec`) only
# for a file the fast path cannot prove the models would read the same way.
if TYPE_CHECKING:
    from toolrun.config import fastpath
    from toolrun.config.fastpath import ConfigView
    from toolrun.config.keys import KeyReport
    from toolrun.config.schema import (
        ConfigFile,
        HookCommandSpec,
        HookMatcherSpec,
        ToolrunSection,
        VerifierSpec,
    )

    HookCommands = Sequence[HookCommandSpec | fastpath.HookCommand]
    HookGroups = Mapping[str, Sequence[HookMatcherSpec | fastpath.HookMatcher]]
    from toolrun.yamlfile import Document

CONFIG_NAMES = ("toolrun.yaml", "toolrun.yml")
#: Claude Code's managed settings file on Linux (docs/settings "Settings files"); read when
#: it exists, as Claude Code reads it. ``--managed-settings FILE`` names one instead (CI).
MANAGED_SETTINGS_PATH = Path("/etc/claude-code/managed-settings.json")


@dataclass(frozen=True, slots=True)
class _Loaded:
    """One settings source as read: its kind, its file, the root its paths hang from,
    and the document (for located problems)."""

    kind: SourceKind
    path: Path
    root: Path
    doc: Document
    spec: ConfigFile | ConfigView  # the fast path's reading, or the model's
    keys: KeyReport
    #: a Claude Code plugin's hooks/hooks.json (toolrun.plugins): the plugin's folder
    plugin: Path | None = None

    @property
    def hooks(self) -> HookGroups:
        """The file's hook groups by event (either reading's)."""
        return self.spec.hooks or {}

    def source(self, path: Sequence[str | int]) -> SettingSource:
        loc = self.doc.value_location(path)
        return SettingSource(self.kind, Path(self.doc.file), loc.line, self.root)


def discover_config(workspace: Path) -> Path | None:
    """The nearest toolrun.yaml in the workspace or one of its parents."""
    for folder in (workspace, *workspace.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if candidate.is_file():
                return candidate
    return None


def _is_rule(path: tuple[str | int, ...]) -> bool:
    """A permission rule or a hook's ``if``: the rule grammar has its own words for a NUL."""
    return (
        path[:1] == ("permissions",)
        and path[1:2] in (("allow",), ("ask",), ("deny",))
        or (path[:1] == ("hooks",) and path[-1:] == ("if",))
    )


def _read(kind: SourceKind, path: Path, root: Path, problems: list[Problem]) -> _Loaded | None:
    from toolrun.config.fastpath import read_config
    from toolrun.config.keys import check_keys
    from toolrun.yamlfile import NUL_MESSAGE, DocumentError, format_path, load_document, nul_paths

    try:
        doc = load_document(path, display=display_path(path))
    except DocumentError as exc:
        problems.append(exc.problem)
        return None
    problems.extend(doc.problems)
    data = doc.data if doc.data is not None else {}
    if not isinstance(data, dict):
        problems.append(
            Problem(doc.value_location(()), "", "a config file must be a mapping of settings")
        )
        return None
    if doc.nul_possible:  # no directory, command or setting can hold a NUL (rules say why)
        nul = [
            Problem(doc.value_location(p), format_path(p), NUL_MESSAGE)
            for p in nul_paths(data)
            if not _is_rule(p)
        ]
        if nul:
            problems.extend(nul)
            return None
    spec: ConfigFile | ConfigView | None = read_config(data)
    if spec is None:  # only the model can tell (or say what is wrong, and where)
        spec = _validate(data, doc, problems)
        if spec is None:
            return None
    keys = check_keys(data, doc, managed=kind is SourceKind.MANAGED)
    return _Loaded(kind, path, root, doc, spec, keys)


def _validate(data: dict[str, Any], doc: Document, problems: list[Problem]) -> ConfigFile | None:
    from pydantic import ValidationError

    from toolrun.config.schema import ConfigFile
    from toolrun.validation import problems_from_validation

    try:
        return ConfigFile.model_validate(data)
    except ValidationError as exc:
        problems.extend(problems_from_validation(exc, doc, model=ConfigFile))
        return None


def _commands(group: HookMatcherSpec | fastpath.HookMatcher) -> HookCommands:
    return group.hooks


def _verifiers(
    section: ToolrunSection | fastpath.Toolrun | None,
) -> Sequence[VerifierSpec | fastpath.Verifier]:
    return (section.autoVerify or ()) if section is not None else ()
