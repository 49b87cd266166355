"""Whether a Bash call runs sandboxed, from the merged ``sandbox`` settings.

A call leaves the sandbox only when ``dangerouslyDisableSandbox`` is set or every
sub-command of a fully analysable command matches an ``excludedCommands``
pattern (allow-rule semantics: what cannot be analysed stays in the sandbox).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from toolrun.config.models import Config, PermissionRule, SettingSource, SourceKind
from toolrun.config.sandbox import SandboxSettings
from toolrun.sandbox.availability import OPT_OUT_HINT, Availability, probe

PlacementKind = Literal["sandboxed", "excluded", "disabled", "unavailable", "error"]


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a Bash call runs. ``sandboxed`` is the only kind that is under bubblewrap."""

    kind: PlacementKind
    reason: str

    @property
    def sandboxed(self) -> bool:
        return self.kind == "sandboxed"

    @property
    def leaves_on_request(self) -> bool:
        """The call asks to run outside (excludedCommands, dangerouslyDisableSandbox)."""
        return self.kind in ("excluded", "disabled")


@dataclass(frozen=True)
class SandboxPolicy:
    """What the user's sandbox allows a command: its settings, the workspace and its
    additional directories, and the WebFetch domain deny rules the proxy applies."""

    settings: SandboxSettings
    workspace: Path
    additional_directories: tuple[Path, ...]
    #: WebFetch(domain:...) deny rules: (pattern, source); they win over allowedDomains.
    denied_domains: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, config: Config) -> SandboxPolicy:
        """The policy, with the deny rules merged in as Claude Code merges them.

        ``WebFetch(domain:...)`` deny rules deny those domains at the proxy;
        ``Read(path)`` deny rules make the path unreadable and ``Edit(path)`` (Write,
        MultiEdit) deny rules read-only, where the path is one place (no wildcard).
        """
        from toolrun.permissions.grammar import RuleSyntaxError, parse_rule

        domains: list[tuple[str, str]] = []
        deny_read: list[str] = []
        deny_write: list[str] = []
        home = os.path.expanduser("~")
        for rule in config.rules_for("deny"):
            try:
                parsed = parse_rule(rule.text, behavior="deny")
            except RuleSyntaxError:
                continue
            content = parsed.content
            if content is None:
                continue
            if parsed.kind == "domain":
                domains.append((content[len("domain:") :], str(rule.source)))
            elif parsed.kind == "path":
                path = _rule_path(content, config.workspace, rule.source.root, home)
                if path is None:
                    continue
                if parsed.tool == "Read":
                    deny_read.append(path)
                elif parsed.tool in ("Edit", "Write", "MultiEdit", "NotebookEdit"):
                    deny_write.append(path)
        # allowRead re-opens a denyRead region, never a Read deny rule's: the rules are
        # also the engine's, and a sandbox setting does not loosen them
        allow_read = tuple(
            p for p in config.sandbox.allow_read
            if not any(p == d or p.startswith(d.rstrip("/") + "/") for d in deny_read)
        )
        settings = replace(
            config.sandbox,
            allow_read=allow_read,
            deny_read=tuple(dict.fromkeys((*config.sandbox.deny_read, *deny_read))),
            deny_write=tuple(dict.fromkeys((*config.sandbox.deny_write, *deny_write))),
        )
        return cls(
            settings,
            config.workspace,
            tuple(config.additional_directories),
            tuple(domains),
        )

    def availability(self) -> Availability:
        return probe(self.settings.bwrap_path)

    def placement(self, input: Mapping[str, Any]) -> Placement:
        """Where this Bash input would run (the sandbox must be enabled)."""
        # Anything but false or absent asks to leave (fail closed: a value the decision
        # read as "stay" must never run outside).
        if input.get("dangerouslyDisableSandbox") not in (None, False):
            kind: PlacementKind = "disabled"
            reason = "dangerouslyDisableSandbox is set"
        else:
            command = input.get("command")
            matched = self.excluded(command) if isinstance(command, str) else None
            if matched is None:
                return self._available()
            kind, reason = "excluded", f"sandbox.excludedCommands matches ({matched})"
        if not self.settings.allow_unsandboxed:
            # Never runs outside: the decision denies it, and if it ran it would be sandboxed.
            return Placement(kind, f"{reason}, but sandbox.allowUnsandboxedCommands is false")
        return Placement(kind, f"runs unsandboxed: {reason}")

    def _available(self) -> Placement:
        found = self.availability()
        if found.ok:
            return Placement("sandboxed", "runs sandboxed (bubblewrap)")
        if self.settings.fail_if_unavailable:
            return Placement(
                "error",
                f"cannot run sandboxed (sandbox.failIfUnavailable is true): {found.reason}; "
                f"{OPT_OUT_HINT}",
            )
        return Placement("unavailable", f"runs unsandboxed, with a warning: {found.reason}")

    def excluded(self, command: str) -> str | None:
        """The excludedCommands patterns that cover every sub-command, or None."""
        patterns = self.settings.excluded_commands
        if not patterns:
            return None
        return _excluded(patterns, command)


def _rule_path(pattern: str, workspace: Path, root: Path, home: str) -> str | None:
    """The one place a Read/Edit rule pattern names, or None when it names many.

    Rule semantics: ``//p`` absolute, ``~/p`` home, ``/p`` the rule's source root,
    ``./p`` and ``p`` the workspace (a bare name floats to any depth: its top-level
    place is the one a mount can cover). ``dir/**`` is ``dir``.
    """
    text = pattern.removesuffix("/**").rstrip("/") or "/"
    if any(c in text for c in "*?[") or "\\" in text:
        return None
    if text.startswith("//"):
        path = "/" + text.lstrip("/")
    elif text == "~" or text.startswith("~/"):
        path = home + text[1:]
    elif text.startswith("/"):
        path = f"{root}{text}"
    else:
        path = f"{workspace}/{text}"
    return os.path.normpath(path)


@functools.cache
def _compiled(patterns: tuple[str, ...]) -> tuple[Any, ...]:
    """``excludedCommands`` as allow rules (once per list of patterns)."""
    from toolrun.permissions.grammar import RuleSyntaxError, parse_rule
    from toolrun.permissions.rules import compile_rule

    source = SettingSource(SourceKind.TOOLRUN, None, 0, Path("/"), flag="sandbox.excludedCommands")
    rules = []
    for index, pattern in enumerate(patterns):
        text = f"Bash({pattern})"
        try:
            parsed = parse_rule(text, behavior="allow")
            rule = PermissionRule("allow", text, source)
            rules.append(compile_rule(index, rule, parsed, workspace=(), home=()))
        except (RuleSyntaxError, ValueError):
            continue
    return tuple(rules)


@functools.lru_cache(maxsize=4096)
def _excluded(patterns: tuple[str, ...], command: str) -> str | None:
    from toolrun.permissions.bash import analyse
    from toolrun.permissions.rules import Subject, match

    analysis = analyse(command)
    if analysis.problems or not analysis.commands:
        return None
    rules = _compiled(patterns)
    used: list[str] = []
    for cmd in analysis.commands:
        if not cmd.analysable:
            return None
        subject = Subject("command", "Bash", cmd.text, "execute", command=cmd)
        hit = next((r for r in rules if match(r, subject).matched), None)
        if hit is None:
            return None
        used.append(patterns[hit.index])
    return ", ".join(dict.fromkeys(used))
