"""Finding, reading and merging configuration sources (design §3).

Precedence, highest first: managed settings, command-line flags and ``--settings``
files (the last one given wins a scalar), toolrun.yaml, then Claude Code's local
(``.claude/settings.local.json``) and project (``.claude/settings.json``) settings of
the workspace, read always (a project's own rules are never skipped silently), and the
user's ``~/.claude/settings.json``, read only with ``loadClaudeSettings`` (CI runs stay
reproducible; found and not read, it is a warning naming it). Rule and hook lists merge
across all sources; a scalar comes from the highest source that sets it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

from toolrun.config.models import (
    ENFORCE,
    MODE_ALIASES,
    PERMISSION_MODES,
    Behavior,
    Config,
    HookCommand,
    HookMatcher,
    PermissionMode,
    PermissionRule,
    RuleExample,
    SettingSource,
    SourceKind,
    ToolrunSettings,
    Verifier,
)
from toolrun.config.sandbox import SandboxSettings
from toolrun.errors import ConfigError, Problem
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
        ExampleSpec,
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
_log = logging.getLogger("toolrun.config")
MAX_CONCURRENCY_ENV = "TOOLRUN_MAX_CONCURRENCY"
#: the environment's spelling of ``--managed-settings`` and ``--strict`` (every command reads
#: them, exec and explain-permission included)
MANAGED_SETTINGS_ENV = "TOOLRUN_MANAGED_SETTINGS"
STRICT_ENV = "TOOLRUN_STRICT"


@dataclass(frozen=True, slots=True)
class _Loaded:
    kind: SourceKind
    path: Path
    root: Path
    doc: Document
    spec: ConfigFile | ConfigView  # the fast path's reading, or the model's
    keys: KeyReport

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


def _check_rules(loaded: _Loaded, problems: list[Problem], warnings: list[Problem]) -> None:
    from toolrun.config.keys import is_known_tool, tool_hint
    from toolrun.permissions.grammar import RuleSyntaxError, parse_rule

    perms = loaded.spec.permissions
    # no early return without permissions: the hooks below are checked all the same
    for behavior in ("allow", "ask", "deny") if perms is not None else ():
        for i, text in enumerate(getattr(perms, behavior)):
            where: tuple[str | int, ...] = ("permissions", behavior, i)
            try:
                parsed = parse_rule(text, behavior=behavior)
            except RuleSyntaxError as exc:
                problems.append(
                    Problem(
                        loaded.doc.value_location(where), f"permissions.{behavior}[{i}]", str(exc)
                    )
                )
                continue
            if not parsed.tool_glob and not is_known_tool(parsed.tool):
                problems.append(
                    Problem(
                        loaded.doc.value_location(where),
                        f"permissions.{behavior}[{i}]",
                        f"unknown tool {parsed.tool!r} in rule {text!r}{tool_hint(parsed.tool)}",
                    )
                )
                continue
            if parsed.kind == "path" and parsed.content is not None:
                from toolrun.permissions.paths import pattern_problem

                problem = pattern_problem(parsed.content, behavior)
                if problem is not None:
                    problems.append(
                        Problem(
                            loaded.doc.value_location(where),
                            f"permissions.{behavior}[{i}]",
                            f"{text!r}: {problem}",
                        )
                    )
                    continue
            if parsed.warning:
                warnings.append(
                    Problem(
                        loaded.doc.value_location(where),
                        f"permissions.{behavior}[{i}]",
                        f"warning: {parsed.text!r}: {parsed.warning}",
                    )
                )


def _commands(group: HookMatcherSpec | fastpath.HookMatcher) -> HookCommands:
    return group.hooks


def _check_hooks(loaded: _Loaded, problems: list[Problem], warnings: list[Problem]) -> None:
    """Matchers that are not valid regexes, empty commands and bad ``if`` rules: errors
    (each would silently keep a hook from ever running); hook types toolrun cannot run
    (``prompt``, ``agent``): warnings."""
    if not loaded.spec.hooks:
        return
    from toolrun.hooks.matching import compile_matcher
    from toolrun.hooks.models import RUNNABLE_HOOK_TYPES
    from toolrun.permissions.grammar import RuleSyntaxError, parse_rule

    for event, groups in loaded.hooks.items():
        for g, group in enumerate(groups):
            matcher = compile_matcher(group.matcher)
            if matcher.kind == "invalid":
                problems.append(
                    Problem(
                        loaded.doc.value_location(("hooks", event, g, "matcher")),
                        f"hooks.{event}[{g}].matcher",
                        f"invalid matcher regex {group.matcher!r}: {matcher.error}; "
                        "the hooks under it would never run",
                    )
                )
            for h, hook in enumerate(_commands(group)):
                if hook.type not in RUNNABLE_HOOK_TYPES:
                    warnings.append(
                        Problem(
                            loaded.doc.value_location(("hooks", event, g, "hooks", h, "type")),
                            f"hooks.{event}[{g}].hooks[{h}].type",
                            f"warning: toolrun does not run {hook.type!r} hooks: this one gives "
                            "no decision (a denial under toolrun.hookFailure: closed)",
                        )
                    )
                elif not (hook.command or "").strip():
                    problems.append(
                        Problem(
                            loaded.doc.value_location(("hooks", event, g, "hooks", h, "command")),
                            f"hooks.{event}[{g}].hooks[{h}].command",
                            "empty or missing command: the hook would do nothing",
                        )
                    )
                if hook.if_ is None:
                    continue
                try:
                    parse_rule(hook.if_)
                except RuleSyntaxError as exc:
                    where = ("hooks", event, g, "hooks", h, "if")
                    problems.append(
                        Problem(
                            loaded.doc.value_location(where),
                            f"hooks.{event}[{g}].hooks[{h}].if",
                            str(exc),
                        )
                    )


def _verifiers(
    section: ToolrunSection | fastpath.Toolrun | None,
) -> Sequence[VerifierSpec | fastpath.Verifier]:
    return (section.autoVerify or ()) if section is not None else ()


def _check_verifiers(loaded: _Loaded, problems: list[Problem]) -> None:
    """``toolrun.autoVerify``: an empty command or a pattern pathspec cannot read would
    keep a verifier from ever running; each is a located error."""
    section = loaded.spec.toolrun
    specs = _verifiers(section)
    if not specs:
        return
    from toolrun.verify.files import pattern_error
    from toolrun.yamlfile import format_path

    for v, spec in enumerate(specs):
        where: tuple[str | int, ...] = ("toolrun", "autoVerify", v)
        if not spec.command.strip():
            problems.append(
                Problem(
                    loaded.doc.value_location((*where, "command")),
                    format_path((*where, "command")),
                    "empty command: the verifier would do nothing",
                )
            )
        for p, pattern in enumerate(spec.files):
            error = pattern_error(pattern)
            if error is not None:
                problems.append(
                    Problem(
                        loaded.doc.value_location((*where, "files", p)),
                        format_path((*where, "files", p)),
                        f"invalid pattern {pattern!r}: {error}",
                    )
                )


def _check_network(loaded: _Loaded, problems: list[Problem]) -> None:
    """``sandbox.network``: no over-broad ``allowedDomains`` entry (``*``, ``*.com``), as
    sandbox-runtime refuses them; ``allowPrivateHosts`` names exact hosts only."""
    sandbox = loaded.spec.sandbox
    net = sandbox.network if sandbox is not None else None
    if net is None:
        return
    from toolrun.permissions.domains import host_port, overbroad, url_host
    from toolrun.yamlfile import format_path

    found: list[tuple[str, int, str | None]] = [
        ("allowedDomains", i, overbroad(p)) for i, p in enumerate(net.allowedDomains or ())
    ]
    for i, entry in enumerate(net.allowPrivateHosts):
        parsed = host_port(entry)
        found.append(("allowPrivateHosts", i, parsed if isinstance(parsed, str) else None))
    for i, entry in enumerate(net.deniedDomains):
        # an entry no host can match would leave its domain reachable: say so
        host = _without_port(entry.strip())
        probe = host.removeprefix("*.").replace("*", "x")
        odd = any(c in host for c in "/@?#") or (":" in host and not host.startswith("["))
        if odd or url_host(f"http://{probe}/").name is None:
            why = (
                f"{entry!r} is not a domain, wildcard or IP literal (with an optional :port): "
                "it would deny nothing"
            )
            found.append(("deniedDomains", i, why))
    for key, i, message in found:
        if message is not None:
            where = ("sandbox", "network", key, i)
            problems.append(Problem(loaded.doc.value_location(where), format_path(where), message))


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
    notes = [
        w if w.message.startswith("warning: ") else replace(w, message=f"warning: {w.message}")
        for w in warned
    ]
    unlocated = [_unloaded_warning(p, home_dir) for p in unloaded]
    ignored = tuple(dict.fromkeys(k for item in loaded for k in item.keys.ignored))
    if ignored:
        unlocated.append(
            f"ignored: {', '.join(ignored)} (Claude Code settings toolrun does not enforce)"
        )
    unlocated.extend(config.policy_notes)  # so that explain-permission and check say so
    notes.extend(Problem(None, "", text) for text in unlocated)
    warnings = [str(note) for note in notes]
    for note in notes:  # the CLI shows these on stderr (toolrun.cli installs a handler)
        _log.warning("%s", note, extra={"problem": note})
    return replace(
        config,
        warnings=tuple(warnings),
        notes=tuple(notes),
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


def _example(spec: ExampleSpec, doc: Document, where: tuple[str | int, ...]) -> RuleExample:
    from toolrun.yamlfile import format_path

    mode = MODE_ALIASES.get(spec.mode, spec.mode) if spec.mode is not None else None
    return RuleExample(
        expect=spec.expect,
        location=doc.value_location(where),
        path=format_path(where),
        call=spec.call,
        tool=spec.tool,
        input=MappingProxyType(dict(spec.input)) if spec.input is not None else None,
        mode=cast(PermissionMode | None, mode),
    )


def _collect_examples(loaded: list[_Loaded], problems: list[Problem]) -> tuple[RuleExample, ...]:
    """``toolrun.examples`` of every source, then each ``examplesFile`` (a list of examples,
    relative to its source's folder)."""
    out: list[RuleExample] = []
    for item in loaded:
        section = item.spec.toolrun
        if section is None:
            continue
        for i, spec in enumerate(section.examples or ()):
            out.append(_example(spec, item.doc, ("toolrun", "examples", i)))
        if section.examplesFile is None:
            continue
        from pydantic import TypeAdapter, ValidationError

        from toolrun.config.schema import ExampleSpec
        from toolrun.yamlfile import DocumentError, format_path, load_document

        path = Path(os.path.expanduser(section.examplesFile))
        path = path if path.is_absolute() else item.root / path
        try:
            doc = load_document(path, display=display_path(path))
        except DocumentError as exc:
            problems.append(exc.problem)
            continue
        data = doc.data
        prefix: tuple[str, ...] = ()
        if isinstance(data, dict) and "examples" in data:
            data, prefix = data["examples"], ("examples",)
        try:
            specs = TypeAdapter(list[ExampleSpec]).validate_python(data)
        except ValidationError as exc:
            for error in exc.errors():
                where = (*prefix, *error["loc"])
                problems.append(
                    Problem(doc.value_location(where), format_path(where), error["msg"])
                )
            continue
        out.extend(_example(s, doc, (*prefix, i)) for i, s in enumerate(specs))
    return tuple(out)


def _check_bypass(config: Config, loaded: list[_Loaded], examples: tuple[RuleExample, ...]) -> None:
    """``permissions.disableBypassPermissionsMode: disable`` in any source forbids the mode,
    whoever asks for it (``--mode``, a ``defaultMode``, a self-test's ``mode``): an error
    naming both places."""
    asker: object = config.mode_source or "the config"
    if config.default_mode != "bypassPermissions":
        example = next((e for e in examples if e.mode == "bypassPermissions"), None)
        if example is None:
            return
        asker = f"{example.location.file}:{example.location.line}"
    for item in loaded:
        perms = item.spec.permissions
        if perms is not None and perms.disableBypassPermissionsMode == "disable":
            from toolrun.yamlfile import format_path

            where = ("permissions", "disableBypassPermissionsMode")
            raise ConfigError(
                [
                    Problem(
                        item.doc.value_location(where),
                        format_path(where),
                        "bypassPermissions mode is disabled by this setting; it was asked for by "
                        f"{asker}",
                    )
                ]
            )


def _merge(
    workspace: Path,
    loaded: list[_Loaded],
    mode: str | None,
    env_concurrency: int | None,
    home: Path,
) -> Config:
    rules: list[PermissionRule] = []
    additional: list[Path] = []
    hooks: list[HookMatcher] = []
    mcp: dict[str, Mapping[str, Any]] = {}
    default_mode: str | None = mode
    mode_source: SettingSource | None = (
        SettingSource(SourceKind.CLI, None, 0, workspace, flag="--mode") if mode else None
    )
    managed = [i for i in loaded if i.kind is SourceKind.MANAGED]
    for item in managed:  # managed settings win over the command line too (Claude Code's order)
        perms = item.spec.permissions
        if perms is not None and perms.defaultMode is not None:
            default_mode = perms.defaultMode
            mode_source = item.source(("permissions", "defaultMode"))
            break
    rules_lock = _lock(managed, "allowManagedPermissionRulesOnly")
    hooks_lock = _lock(managed, "allowManagedHooksOnly")
    domains_lock = _sandbox_lock(managed, "network", "allowManagedDomainsOnly")
    notes: list[str] = []
    hooks_off = _hooks_off(loaded)
    for item in loaded:
        perms = item.spec.permissions
        if rules_lock is not None and item.kind is not SourceKind.MANAGED and perms is not None:
            dropped = len(perms.allow) + len(perms.ask) + len(perms.deny)
            if dropped:
                notes.append(
                    f"allowManagedPermissionRulesOnly ({rules_lock}): {dropped} permission "
                    f"rule{'s' if dropped != 1 else ''} from {item.doc.file} not used"
                )
        rules_used = rules_lock is None or item.kind is SourceKind.MANAGED
        hooks_used = item.hooks
        if hooks_lock is not None and item.kind is not SourceKind.MANAGED and hooks_used:
            dropped = sum(len(g.hooks) for groups in hooks_used.values() for g in groups)
            notes.append(
                f"allowManagedHooksOnly ({hooks_lock}): {dropped} hook"
                f"{'s' if dropped != 1 else ''} from {item.doc.file} not used"
            )
            hooks_used = {}
        off = None
        if hooks_off is not None and (hooks_off[1] or item.kind is not SourceKind.MANAGED):
            off = hooks_off[0]
        if off is not None and hooks_used:
            dropped = sum(len(g.hooks) for groups in hooks_used.values() for g in groups)
            notes.append(
                f"disableAllHooks ({off}): {dropped} hook{'s' if dropped != 1 else ''} from "
                f"{item.doc.file} not run"
            )
            hooks_used = {}
        if perms is not None:
            if default_mode is None and perms.defaultMode is not None:
                default_mode = perms.defaultMode
                mode_source = item.source(("permissions", "defaultMode"))
            behaviors: tuple[Behavior, ...] = ("allow", "ask", "deny")
            dropped_domains = 0
            for behavior in behaviors if rules_used else ():
                for i, text in enumerate(getattr(perms, behavior)):
                    if (
                        domains_lock is not None
                        and behavior == "allow"
                        and item.kind is not SourceKind.MANAGED
                        and _allows_domains(text)
                    ):
                        dropped_domains += 1
                        continue
                    rules.append(
                        PermissionRule(
                            behavior,
                            text,
                            item.source(("permissions", behavior, i)),
                        )
                    )
            if dropped_domains:
                notes.append(
                    f"allowManagedDomainsOnly ({domains_lock}): {dropped_domains} WebFetch "
                    f"allow rule{'s' if dropped_domains != 1 else ''} from {item.doc.file} "
                    "not used"
                )
            for d in perms.additionalDirectories:
                p = Path(os.path.expanduser(d))
                resolved = (p if p.is_absolute() else item.root / p).resolve()
                if resolved not in additional:
                    additional.append(resolved)
        for event, groups in hooks_used.items():
            for g, group in enumerate(groups):
                commands = tuple(
                    HookCommand(
                        command=h.command or f"<{h.type} hook>",
                        timeout=h.timeout,
                        source=item.source(("hooks", event, g, "hooks", i, "command")),
                        type=h.type,
                        if_rule=h.if_,
                    )
                    for i, h in enumerate(_commands(group))
                )
                hooks.append(
                    HookMatcher(
                        event=event,
                        matcher=group.matcher,
                        hooks=commands,
                        source=item.source(("hooks", event, g)),
                        sequential=group.sequential,
                    )
                )
        for name, server in (item.spec.mcpServers or {}).items():
            mcp.setdefault(name, MappingProxyType(server.model_dump(exclude_none=True)))
        rules.extend(_denied_domains(item))
    if default_mode is not None and default_mode in MODE_ALIASES:
        if default_mode == "auto":
            notes.append(
                f"permission mode auto ({mode_source or 'the config'}): toolrun runs no "
                "classifier, so calls are decided as in default mode (what the classifier "
                "would have judged asks)"
            )
        default_mode = MODE_ALIASES[default_mode]

    return Config(
        workspace=workspace,
        default_mode=cast(PermissionMode, default_mode or "default"),
        mode_source=mode_source,
        rules=tuple(rules),
        additional_directories=tuple(additional),
        hooks=tuple(hooks),
        mcp_servers=MappingProxyType(mcp),
        toolrun=replace(
            _merge_toolrun(loaded, env_concurrency),
            auto_verify=_merge_verifiers(loaded, hooks_lock, notes),
        ),
        sandbox=_merge_sandbox(loaded, home, notes),
        files=tuple(Path(i.doc.file) for i in loaded),
        policy_notes=tuple(notes),
        domains_lock=domains_lock,
        managed_domains=_managed_domains(managed) if domains_lock is not None else (),
    )


def _managed_domains(managed: list[_Loaded]) -> tuple[str, ...]:
    """The ``sandbox.network.allowedDomains`` of the managed settings files."""
    found: list[str] = []
    for item in managed:
        network = getattr(item.spec.sandbox, "network", None) if item.spec.sandbox else None
        found.extend(getattr(network, "allowedDomains", None) or ())
    return tuple(found)


def _hooks_off(loaded: list[_Loaded]) -> tuple[SettingSource, bool] | None:
    """Where ``disableAllHooks: true`` is set, and whether managed hooks are off too: set
    in managed settings it turns every hook off; elsewhere, every hook but the managed
    ones (Claude Code's reading, docs/hooks "Hook locations")."""
    found: tuple[SettingSource, bool] | None = None
    for item in loaded:
        if getattr(item.spec, "disableAllHooks", None):
            managed = item.kind is SourceKind.MANAGED
            if found is None or (managed and not found[1]):
                found = (item.source(("disableAllHooks",)), managed)
    return found


def _sandbox_lock(managed: list[_Loaded], block: str, key: str) -> SettingSource | None:
    """Where a managed file sets ``sandbox.<block>.<key>: true``, if one does."""
    for item in managed:
        sandbox = item.spec.sandbox
        section = getattr(sandbox, block, None) if sandbox is not None else None
        if section is not None and getattr(section, key, None):
            return item.source(("sandbox", block, key))
    return None


def _allows_domains(text: str) -> bool:
    """A WebFetch allow rule (``WebFetch`` or ``WebFetch(domain:...)``): what
    ``allowManagedDomainsOnly`` keeps from managed settings only."""
    from toolrun.permissions.grammar import RuleSyntaxError, parse_rule

    try:
        parsed = parse_rule(text, behavior="allow")
    except RuleSyntaxError:
        return False
    return parsed.tool == "WebFetch"


def _denied_domains(item: _Loaded) -> list[PermissionRule]:
    """``sandbox.network.deniedDomains`` as ``WebFetch(domain:...)`` deny rules with the
    entry's source: WebFetch is denied those hosts, and the sandbox's proxy (which takes the
    WebFetch deny rules, :meth:`toolrun.sandbox.policy.SandboxPolicy.of`) refuses them. A
    ``:port`` is dropped: the host is denied on every port (the closed way to read it). No
    lock drops them: Claude Code merges this list from every source."""
    sandbox = item.spec.sandbox
    net = sandbox.network if sandbox is not None else None
    out: list[PermissionRule] = []
    for i, entry in enumerate(net.deniedDomains if net is not None else ()):
        host = _without_port(entry.strip())
        if host:
            where = item.source(("sandbox", "network", "deniedDomains", i))
            out.append(PermissionRule("deny", f"WebFetch(domain:{host})", where))
    return out


def _without_port(entry: str) -> str:
    """``example.com:443`` → ``example.com``; ``[::1]:443`` → ``[::1]``; a bare IPv6
    literal is bracketed, as :func:`toolrun.permissions.domains.url_host` spells it."""
    if entry.startswith("["):
        return entry[: entry.index("]") + 1] if "]" in entry else entry
    if entry.count(":") > 1:
        return f"[{entry}]"
    host, _, port = entry.partition(":")
    return host if port.isdigit() or not port else entry


def _lock(managed: list[_Loaded], key: str) -> SettingSource | None:
    """Where a managed file turns a managed-only lock on, if one does."""
    for item in managed:
        if getattr(item.spec, key):
            return item.source((key,))
    return None


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


def _locked(
    lock: SettingSource, key: str, entries: Sequence[str], what: str, item: _Loaded
) -> str:
    """What a managed-only lock left out of one source, said as the other locks say it."""
    n = len(entries)
    return (
        f"{key} ({lock}): {n} {what} entr{'ies' if n != 1 else 'y'} from {item.doc.file} "
        "not used"
    )


def _sandbox_path(text: str, root: Path, home: Path) -> str:
    """A ``sandbox.filesystem`` path made absolute (see :mod:`toolrun.config.sandbox`)."""
    if text.startswith("/"):
        absolute = "/" + text.lstrip("/")
    elif text == "~" or text.startswith("~/"):
        absolute = str(home) + text[1:]
    else:
        absolute = str(root / text)
    return os.path.normpath(absolute)


def _merge_sandbox(loaded: list[_Loaded], home: Path, notes: list[str]) -> SandboxSettings:
    sections = [(i, i.spec.sandbox) for i in loaded if i.spec.sandbox is not None]

    def pick(key: str, default: bool) -> bool:
        for _, section in sections:
            value = getattr(section, key)
            if value is not None:
                return bool(value)
        return default

    def merged(values: list[str]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(values))

    excluded: list[str] = []
    allow_write: list[str] = []
    deny_write: list[str] = []
    deny_read: list[str] = []
    allow_read: list[str] = []
    credential_paths: list[str] = []
    managed = [i for i, _ in sections if i.kind is SourceKind.MANAGED]
    reads_lock = _sandbox_lock(managed, "filesystem", "allowManagedReadPathsOnly")
    domains_lock = _sandbox_lock(managed, "network", "allowManagedDomainsOnly")
    domains: list[str] | None = None
    denied_domains: list[tuple[str, str]] = []
    sockets: list[str] = []
    private_hosts: list[str] = []
    hidden_env: list[str] = []
    local_binding: bool | None = None
    all_sockets: bool | None = None
    bwrap: str | None = None
    for item, section in sections:
        excluded.extend(section.excludedCommands)
        if bwrap is None and section.bwrapPath:
            bwrap = _sandbox_path(section.bwrapPath, item.root, home)
        fs = section.filesystem
        if fs is not None:
            allow_write.extend(_sandbox_path(p, item.root, home) for p in fs.allowWrite)
            deny_write.extend(_sandbox_path(p, item.root, home) for p in fs.denyWrite)
            deny_read.extend(_sandbox_path(p, item.root, home) for p in fs.denyRead)
            if fs.allowRead and reads_lock is not None and item.kind is not SourceKind.MANAGED:
                notes.append(_locked(reads_lock, "allowManagedReadPathsOnly", fs.allowRead,
                                     "sandbox.filesystem.allowRead", item))
            else:
                allow_read.extend(_sandbox_path(p, item.root, home) for p in fs.allowRead)
        net = section.network
        if net is not None:
            if (
                net.allowedDomains is not None
                and domains_lock is not None
                and item.kind is not SourceKind.MANAGED
            ):
                notes.append(_locked(domains_lock, "allowManagedDomainsOnly", net.allowedDomains,
                                     "sandbox.network.allowedDomains", item))
            elif net.allowedDomains is not None:
                domains = [*(domains or []), *net.allowedDomains]
            denied_domains.extend(
                (rule.text.removeprefix("WebFetch(domain:").removesuffix(")"), str(rule.source))
                for rule in _denied_domains(item)
            )
            sockets.extend(net.allowUnixSockets)
            private_hosts.extend(net.allowPrivateHosts)
            if local_binding is None:
                local_binding = net.allowLocalBinding
            if all_sockets is None:
                all_sockets = net.allowAllUnixSockets
        creds = section.credentials
        if creds is not None:
            # "mask" (a placeholder the proxy swaps for the real value) is not
            # implemented: hiding the credential is the closed way to fail.
            secrets = [_sandbox_path(f.path, item.root, home) for f in creds.files]
            deny_read.extend(secrets)
            credential_paths.extend(secrets)
            hidden_env.extend(v.name for v in creds.envVars)
    # a credential is never re-opened by allowRead (it is hidden, not a region)
    allow_read = [
        p for p in allow_read
        if not any(p == c or p.startswith(c.rstrip("/") + "/") for c in credential_paths)
    ]
    return SandboxSettings(
        enabled=pick("enabled", False),
        auto_allow_bash=pick("autoAllowBashIfSandboxed", False),
        excluded_commands=merged(excluded),
        allow_unsandboxed=pick("allowUnsandboxedCommands", True),
        fail_if_unavailable=pick("failIfUnavailable", False),
        allow_write=merged(allow_write),
        deny_write=merged(deny_write),
        deny_read=merged(deny_read),
        allow_read=merged(allow_read),
        allowed_domains=None if domains is None else merged(domains),
        denied_domains=tuple(dict.fromkeys(denied_domains)),
        allow_private_hosts=merged(private_hosts),
        allow_local_binding=bool(local_binding),
        allow_all_unix_sockets=bool(all_sockets),
        allow_unix_sockets=merged(sockets),
        hidden_env=merged(hidden_env),
        bwrap_path=bwrap,
    )
