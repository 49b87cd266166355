"""A config file's common shape read without pydantic.

Reading a config file with :class:`toolrun.config.schema.ConfigFile` imports pydantic and
builds the schema's models: about 80 ms, half a one-call run, which every benchmark and
most projects pay (they keep a toolrun.yaml). Here each section the loader reads is
declared once (:class:`Shape`): a frozen slots object with the model's field names,
defaults and keys. A file is taken only when every value is one pydantic would take
*unchanged* (exact types, bounds, choices; see :mod:`toolrun.tools.inputs` for the
checks); anything else (a coercion, an error, an unknown key where the model forbids one,
``mcpServers``, rule self-tests) gives None, and the loader asks the model,
which stays the authority on messages, locations and the JSON schema. The loader reads
either answer the same way (lists here are tuples). The shapes' keys are also the known
keys of :func:`toolrun.config.keys.check_keys`; a test holds them equal to the models'.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal

from toolrun.config.sizes import parse_size
from toolrun.tools.inputs import _MISSING, boolean, choice, integer, items, optional, string

Check = Callable[[object], object]
#: a float field takes an int as the float it equals: exactly, within 2**53
_EXACT_FLOAT = 1 << 53
_REQUIRED: Any = object()


def positive_float(value: object) -> object:
    """A float ``gt=0``: pydantic turns an int into a float; NaN fails ``gt``, inf passes."""
    if type(value) is float:
        return value if value > 0 else _MISSING
    if type(value) is int and 0 < value < _EXACT_FLOAT:
        return float(value)
    return _MISSING


def non_empty(value: object) -> object:
    return value if type(value) is str and value else _MISSING


def none(value: object) -> object:
    """A section the fast path leaves to the model: only its absence is taken."""
    return None if value is None else _MISSING


def size(value: object) -> object:
    """``maxStoredOutput``: the schema's own ``parse_size``; what it refuses is the model's."""
    if type(value) not in (int, str):
        return _MISSING
    try:
        parsed = parse_size(value)
    except ValueError:
        return _MISSING
    return parsed if parsed < 1 << 63 else _MISSING


def mapping(key: Check, value: Check) -> Check:
    """A dict (str keys) whose keys and values pass their checks: a new dict."""

    def check_mapping(data: object) -> object:
        if type(data) is not dict:
            return _MISSING
        out = {}
        for k, v in data.items():
            checked = value(v)
            if type(k) is not str or key(k) is _MISSING or checked is _MISSING:
                return _MISSING
            out[k] = checked
        return out

    return check_mapping


class Section:
    """Base of the fast path's sections: frozen slots objects, compared field by field
    (plain classes: a slots dataclass costs ~0.3 ms to define, and there are a dozen)."""

    __slots__ = ()
    #: each field's default but None; the fields without one
    _defaults: ClassVar[Mapping[str, object]] = {}
    _required: ClassVar[tuple[str, ...]] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _slots(self))

    __hash__ = None  # type: ignore[assignment]  # (holds lists' stand-ins and dicts)

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in _slots(self))
        return f"{type(self).__name__}({fields})"


def _slots(section: Section) -> tuple[str, ...]:
    slots: tuple[str, ...] = type(section).__slots__
    return slots


class Shape:
    """One model's fast twin: ``cls`` (a :class:`Section` with the model's field names)
    built from ``checks`` by field name; ``aliases`` maps a field to the key it is written
    as (the model also takes its name: ``populate_by_name``); ``forbid`` for a model whose
    unknown keys are errors."""

    def __init__(
        self,
        cls: type[Section],
        *,
        forbid: bool = False,
        aliases: Mapping[str, str] | None = None,
        **checks: Check,
    ) -> None:
        self.cls = cls
        self.forbid = forbid
        self.aliases = dict(aliases or {})
        self.checks = checks
        assert set(checks) == set(cls.__slots__), cls
        self.defaults = {
            name: cls._defaults.get(name, _REQUIRED if name in cls._required else None)
            for name in checks
        }
        #: key as written -> field name (an aliased field by either)
        self.names = {name: name for name in checks} | {a: n for n, a in self.aliases.items()}

    @property
    def keys(self) -> frozenset[str]:
        """The keys the model declares (a field's alias where it has one)."""
        return frozenset(self.aliases.get(name, name) for name in self.checks)

    def fast(self, data: object) -> Any:
        """``data`` as the model would validate it, or None when only the model can tell."""
        if type(data) is not dict:
            return None
        values: dict[str, object] = {}
        names = self.names
        for key, value in data.items():
            name = names.get(key) if type(key) is str else None
            if name is None:
                if self.forbid or type(key) is not str:
                    return None
                continue  # extra="ignore"
            if name in values:  # a field written by its name and its alias
                return None
            checked = self.checks[name](value)
            if checked is _MISSING:
                return None
            values[name] = checked
        section = object.__new__(self.cls)
        for name, default in self.defaults.items():
            value = values.get(name, default)
            if value is _REQUIRED:
                return None
            object.__setattr__(section, name, value)
        return section

    def check(self, value: object) -> object:
        """:meth:`fast` as a field check (a nested section)."""
        found = self.fast(value)
        return _MISSING if found is None else found


_STRINGS = items(string)
_MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions", "auto")


class Permissions(Section):
    __slots__ = (
        "additionalDirectories",
        "allow",
        "ask",
        "defaultMode",
        "deny",
        "disableBypassPermissionsMode",
    )
    defaultMode: str | None
    allow: tuple[str, ...]
    ask: tuple[str, ...]
    deny: tuple[str, ...]
    additionalDirectories: tuple[str, ...]
    disableBypassPermissionsMode: str | None
    _defaults: ClassVar[Mapping[str, object]] = {
        "allow": (),
        "ask": (),
        "deny": (),
        "additionalDirectories": (),
    }


PERMISSIONS = Shape(
    Permissions,
    defaultMode=optional(choice(*_MODES)),
    allow=_STRINGS,
    ask=_STRINGS,
    deny=_STRINGS,
    additionalDirectories=_STRINGS,
    disableBypassPermissionsMode=optional(choice("disable")),
)


class HookCommand(Section):
    __slots__ = ("allowedEnvVars", "async_", "command", "headers", "if_", "timeout", "type", "url")
    type: str
    command: str
    timeout: float | None
    if_: str | None
    async_: bool | None
    url: str | None
    headers: dict[str, str] | None
    allowedEnvVars: tuple[str, ...] | None
    _defaults: ClassVar[Mapping[str, object]] = {"type": "command", "command": ""}


HOOK_COMMAND = Shape(
    HookCommand,
    aliases={"if_": "if", "async_": "async"},
    type=non_empty,
    command=string,
    timeout=optional(positive_float),
    if_=optional(string),
    async_=optional(boolean),
    url=optional(string),
    headers=optional(mapping(string, string)),
    allowedEnvVars=optional(items(string)),
)


class HookMatcher(Section):
    __slots__ = ("hooks", "matcher", "sequential")
    matcher: str
    hooks: tuple[HookCommand, ...]
    _required = ("hooks",)
    sequential: bool
    _defaults: ClassVar[Mapping[str, object]] = {"matcher": "", "sequential": False}


HOOK_MATCHER = Shape(
    HookMatcher, matcher=string, hooks=items(HOOK_COMMAND.check), sequential=boolean
)


class Verifier(Section):
    __slots__ = ("block", "command", "files", "format", "name", "timeout")
    _required = ("name", "files", "command")
    _defaults: ClassVar[Mapping[str, object]] = {"format": "text", "timeout": 60.0, "block": False}
    name: str
    files: tuple[str, ...]
    command: str
    format: Literal["sarif", "json", "text"]
    timeout: float
    block: bool


VERIFIER = Shape(
    Verifier,
    forbid=True,
    name=non_empty,
    files=items(string, min_length=1),
    command=string,
    format=choice("sarif", "json", "text"),
    timeout=positive_float,
    block=boolean,
)


class Toolrun(Section):
    __slots__ = (
        "autoVerify",
        "enforce",
        "examples",
        "examplesFile",
        "hookFailure",
        "hookTimeout",
        "kindLimits",
        "loadClaudeSettings",
        "maxCallsPerTurn",
        "maxConcurrency",
        "maxStoredOutput",
        "plugins",
        "siblingAbortOnBashError",
        "strict",
    )
    maxConcurrency: int | None
    kindLimits: dict[str, int] | None
    maxCallsPerTurn: int | None
    siblingAbortOnBashError: bool | None
    hookTimeout: float | None
    hookFailure: str | None
    loadClaudeSettings: bool | None
    strict: bool | None
    examples: None
    examplesFile: str | None
    maxStoredOutput: int | None
    autoVerify: tuple[Verifier, ...] | None
    enforce: str | None
    plugins: tuple[str, ...] | None


TOOLRUN = Shape(
    Toolrun,
    forbid=True,
    maxConcurrency=optional(integer(ge=1)),
    kindLimits=optional(mapping(choice("read", "write", "execute", "network"), integer())),
    maxCallsPerTurn=optional(integer(ge=1)),
    siblingAbortOnBashError=optional(boolean),
    hookTimeout=optional(positive_float),
    hookFailure=optional(choice("open", "closed")),
    loadClaudeSettings=optional(boolean),
    strict=optional(boolean),
    examples=none,
    examplesFile=optional(string),
    maxStoredOutput=optional(size),
    autoVerify=optional(items(VERIFIER.check)),
    enforce=optional(choice("auto", "required", "off")),
    plugins=optional(_STRINGS),
)


class SandboxFilesystem(Section):
    __slots__ = ("allowManagedReadPathsOnly", "allowRead", "allowWrite", "denyRead", "denyWrite")
    allowWrite: tuple[str, ...]
    denyWrite: tuple[str, ...]
    denyRead: tuple[str, ...]
    allowRead: tuple[str, ...]
    allowManagedReadPathsOnly: bool | None
    _defaults: ClassVar[Mapping[str, object]] = {
        "allowWrite": (), "denyWrite": (), "denyRead": (), "allowRead": ()
    }


SANDBOX_FILESYSTEM = Shape(
    SandboxFilesystem,
    allowWrite=_STRINGS,
    denyWrite=_STRINGS,
    denyRead=_STRINGS,
    allowRead=_STRINGS,
    allowManagedReadPathsOnly=optional(boolean),
)


class SandboxNetwork(Section):
    __slots__ = (
        "allowAllUnixSockets",
        "allowLocalBinding",
        "allowManagedDomainsOnly",
        "allowPrivateHosts",
        "allowUnixSockets",
        "allowedDomains",
        "deniedDomains",
    )
    allowedDomains: tuple[str, ...] | None
    allowLocalBinding: bool | None
    allowPrivateHosts: tuple[str, ...]
    allowUnixSockets: tuple[str, ...]
    allowAllUnixSockets: bool | None
    deniedDomains: tuple[str, ...]
    allowManagedDomainsOnly: bool | None
    _defaults: ClassVar[Mapping[str, object]] = {
        "allowUnixSockets": (), "allowPrivateHosts": (), "deniedDomains": ()
    }


SANDBOX_NETWORK = Shape(
    SandboxNetwork,
    allowedDomains=optional(_STRINGS),
    allowLocalBinding=optional(boolean),
    allowPrivateHosts=_STRINGS,
    allowUnixSockets=_STRINGS,
    allowAllUnixSockets=optional(boolean),
    deniedDomains=_STRINGS,
    allowManagedDomainsOnly=optional(boolean),
)


class _Credential(Section):
    __slots__ = ()
    _defaults: ClassVar[Mapping[str, object]] = {"mode": "deny"}


class CredentialFile(_Credential):
    __slots__ = ("mode", "path")
    _required = ("path",)
    path: str
    mode: str


class CredentialEnv(_Credential):
    __slots__ = ("mode", "name")
    _required = ("name",)
    name: str
    mode: str


_CREDENTIAL_MODE = choice("deny", "mask")
CREDENTIAL_FILE = Shape(CredentialFile, path=non_empty, mode=_CREDENTIAL_MODE)
CREDENTIAL_ENV = Shape(CredentialEnv, name=non_empty, mode=_CREDENTIAL_MODE)


class SandboxCredentials(Section):
    __slots__ = ("envVars", "files")
    files: tuple[CredentialFile, ...]
    envVars: tuple[CredentialEnv, ...]
    _defaults: ClassVar[Mapping[str, object]] = {"files": (), "envVars": ()}


SANDBOX_CREDENTIALS = Shape(
    SandboxCredentials, files=items(CREDENTIAL_FILE.check), envVars=items(CREDENTIAL_ENV.check)
)


class Sandbox(Section):
    __slots__ = (
        "allowUnsandboxedCommands",
        "autoAllowBashIfSandboxed",
        "bwrapPath",
        "credentials",
        "enabled",
        "excludedCommands",
        "failIfUnavailable",
        "filesystem",
        "network",
    )
    enabled: bool | None
    autoAllowBashIfSandboxed: bool | None
    excludedCommands: tuple[str, ...]
    allowUnsandboxedCommands: bool | None
    failIfUnavailable: bool | None
    filesystem: SandboxFilesystem | None
    network: SandboxNetwork | None
    credentials: SandboxCredentials | None
    bwrapPath: str | None
    _defaults: ClassVar[Mapping[str, object]] = {"excludedCommands": ()}


_FLAG = optional(boolean)
SANDBOX = Shape(
    Sandbox,
    enabled=_FLAG,
    autoAllowBashIfSandboxed=_FLAG,
    excludedCommands=_STRINGS,
    allowUnsandboxedCommands=_FLAG,
    failIfUnavailable=_FLAG,
    filesystem=optional(SANDBOX_FILESYSTEM.check),
    network=optional(SANDBOX_NETWORK.check),
    credentials=optional(SANDBOX_CREDENTIALS.check),
    bwrapPath=optional(string),
)


class ConfigView(Section):
    """A config file the fast path read: what the loader reads of a ``ConfigFile``."""

    __slots__ = (
        "allowManagedHooksOnly",
        "allowManagedPermissionRulesOnly",
        "allowedHttpHookUrls",
        "disableAllHooks",
        "hooks",
        "httpHookAllowedEnvVars",
        "mcpServers",
        "permissions",
        "sandbox",
        "toolrun",
    )
    permissions: Permissions | None
    hooks: dict[str, tuple[HookMatcher, ...]] | None
    mcpServers: None
    toolrun: Toolrun | None
    sandbox: Sandbox | None
    allowManagedPermissionRulesOnly: bool | None
    allowManagedHooksOnly: bool | None
    disableAllHooks: bool | None
    allowedHttpHookUrls: tuple[str, ...] | None
    httpHookAllowedEnvVars: tuple[str, ...] | None


CONFIG = Shape(
    ConfigView,
    permissions=optional(PERMISSIONS.check),
    hooks=optional(mapping(string, items(HOOK_MATCHER.check))),
    mcpServers=none,
    toolrun=optional(TOOLRUN.check),
    sandbox=optional(SANDBOX.check),
    allowManagedPermissionRulesOnly=_FLAG,
    allowManagedHooksOnly=_FLAG,
    disableAllHooks=_FLAG,
    allowedHttpHookUrls=optional(_STRINGS),
    httpHookAllowedEnvVars=optional(_STRINGS),
)

#: each shape by the name of the model in :mod:`toolrun.config.schema` it stands for
SHAPES = {
    "ConfigFile": CONFIG,
    "PermissionsSection": PERMISSIONS,
    "HookMatcherSpec": HOOK_MATCHER,
    "HookCommandSpec": HOOK_COMMAND,
    "ToolrunSection": TOOLRUN,
    "VerifierSpec": VERIFIER,
    "SandboxSection": SANDBOX,
    "SandboxFilesystemSection": SANDBOX_FILESYSTEM,
    "SandboxNetworkSection": SANDBOX_NETWORK,
    "SandboxCredentialsSection": SANDBOX_CREDENTIALS,
    "CredentialFileSpec": CREDENTIAL_FILE,
    "CredentialEnvSpec": CREDENTIAL_ENV,
}


def read_config(data: Mapping[str, Any]) -> ConfigView | None:
    """``data`` (a config file's mapping) as ``ConfigFile`` would read it, or None."""
    found: ConfigView | None = CONFIG.fast(data)
    return found
