"""The ``sandbox`` block (Claude Code's keys), merged across sources.

Scalars take the highest source that sets them; lists (``excludedCommands``,
``filesystem.*``, ``network.allowedDomains``, credential entries) merge across
every source, as Claude Code merges them. Filesystem paths are made absolute at
load time against the source that wrote them: ``/x`` (and the older ``//x``) is
absolute, ``~/x`` is in the home folder, ``./x`` and ``x`` are relative to the
source's root (the project for ``.claude`` settings, the folder of toolrun.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The ``sandbox`` section of the settings, merged from every source."""

    enabled: bool = False
    auto_allow_bash: bool = False
    excluded_commands: tuple[str, ...] = ()
    #: May a call run outside the sandbox (``dangerouslyDisableSandbox``, excludedCommands)?
    allow_unsandboxed: bool = True
    #: True: a call that cannot be sandboxed is an error; False (default): warn, run bare.
    fail_if_unavailable: bool = False
    allow_write: tuple[str, ...] = ()
    deny_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()
    #: ``filesystem.allowRead``: readable again inside a ``denyRead`` region, where the
    #: allowed path is the more specific one (a deny inside it stays denied)
    allow_read: tuple[str, ...] = ()
    #: None: no network at all; a tuple (maybe empty): only these domains, via the proxy.
    allowed_domains: tuple[str, ...] | None = None
    #: ``network.deniedDomains``: (pattern, where it was written), port dropped; refused by
    #: the proxy even where allowed (WebFetch is denied them by rules the loader adds)
    denied_domains: tuple[tuple[str, str], ...] = ()
    #: ``network.allowPrivateHosts``: exact ``host`` / ``host:port`` entries the proxy may
    #: reach on a loopback, private, link-local or own address (never a wildcard).
    allow_private_hosts: tuple[str, ...] = ()
    allow_local_binding: bool = False
    allow_all_unix_sockets: bool = False
    allow_unix_sockets: tuple[str, ...] = ()
    #: Environment variables hidden from sandboxed commands (``credentials.envVars``).
    hidden_env: tuple[str, ...] = ()
    bwrap_path: str | None = None
