"""Merging the sources into one :class:`~toolrun.config.models.Config`, as Claude Code
merges its settings: rule and hook lists from every source, each with where it was
written; a scalar from the highest source that sets it; the managed-only locks
(``allowManagedPermissionRulesOnly``, ``allowManagedHooksOnly``, ``disableAllHooks``,
``allowManagedDomainsOnly``, ``allowManagedReadPathsOnly``) and a note for what each left
out; ``sandbox.network.deniedDomains`` as WebFetch deny rules; the ``sandbox:`` section
with its paths made absolute. (The ``toolrun:`` section: :mod:`toolrun.config.merge_toolrun`.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from toolrun.config.merge_toolrun import _merge_toolrun, _merge_verifiers
from toolrun.config.models import (
    MODE_ALIASES,
    Behavior,
    Config,
    HookCommand,
    HookMatcher,
    PermissionMode,
    PermissionRule,
    SettingSource,
    SourceKind,
)
from toolrun.config.sandbox import SandboxSettings
from toolrun.config.sources import _commands, _Loaded


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
