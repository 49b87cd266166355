"""The Tool protocol.

A tool is a name, a pydantic input model that uses Claude Code's field names, a
kind, a few pure predicates over a validated input, and an async ``run``. A built-in
tool's validated input is a :class:`toolrun.tools.inputs.Params` object (validated
without pydantic when that gives the same answer); another tool's is its model's instance.
Expected failures are raised as :class:`toolrun.errors.ToolError` (they become
``error`` results); an ``OSError`` that escapes ``run`` is left to the executor,
which may retry it when the tool is retry-safe.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from pydantic import BaseModel

    from toolrun.sandbox.policy import SandboxPolicy
    from toolrun.stored import OutputStore
    from toolrun.tools.inputs import InputSpec, Params


class ToolKind(enum.StrEnum):
    READ = "read"
    WRITE = "write"
    EXECUTE = "execute"
    NETWORK = "network"


def __getattr__(name: str) -> Any:
    # ToolInput is a pydantic model: imported when a tool's model is, not with this module
    if name == "ToolInput":
        from toolrun.tools.input_model import ToolInput

        return ToolInput
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a running tool may know about its surroundings.

    ``workspace`` is absolute and resolved; relative file paths in tool inputs
    are taken from it. ``cwd`` is the Bash working directory, which carries
    from one Bash call to the next.

    ``read_veto`` (set by the executor from the permission engine) says why reading an
    absolute path is not allowed by the rules, or None when it is: tools that list or
    search many files (Grep, Glob, LS) leave such paths out of their results.

    ``roots`` are the workspace and ``additionalDirectories`` (resolved): listings and
    searches never show a path that leads outside them (or their decided search root).
    ``decided`` maps each absolute path the permission engine decided on to where it
    led at that moment (symlinks resolved); a write that would land anywhere else is
    refused. ``private_hosts`` are the hosts a ``WebFetch(domain:...)`` allow rule
    names exactly: only those may resolve to loopback or private addresses.
    """

    workspace: Path
    cwd: Path
    env: Mapping[str, str] | None = None
    run_id: str = ""
    read_veto: Callable[[Path], str | None] | None = None
    roots: tuple[Path, ...] = ()
    decided: Mapping[str, str] | None = None
    private_hosts: frozenset[str] = frozenset()
    home: str | None = None
    #: Set when ``sandbox.enabled``: Bash runs under bubblewrap (see :mod:`toolrun.sandbox`).
    sandbox: SandboxPolicy | None = None
    #: Where the call's whole output goes when its display is trimmed (journal on only).
    stored_output: OutputStore | None = None

    @classmethod
    def for_workspace(cls, workspace: Path | str) -> ToolContext:
        ws = Path(workspace).resolve()
        return cls(workspace=ws, cwd=ws)

    def hidden(self, path: Path | str) -> bool:
        """Whether the rules keep ``path`` (absolute) out of search and listing results."""
        return self.read_veto is not None and self.read_veto(Path(path)) is not None

    def resolve(self, path: str | Path, field: str = "path") -> Path:
        """An input path made absolute against the workspace, ``~`` expanded, ``..`` folded:
        the permission engine's own resolver, so the tool opens what was decided.

        Symlinks are *not* resolved: permission checks need the link itself too.
        """
        return Path(self.resolve_text(path, field))

    def resolve_text(self, path: str | Path, field: str = "path") -> str:
        """:meth:`resolve` as a string (for a tool that needs no ``Path``)."""
        from toolrun.permissions.paths import tool_path

        text = os.fspath(path)
        home = self.home or (os.path.expanduser("~") if text.startswith("~") else "")
        return tool_path(text, base=str(self.workspace), home=home, field=field)

    def decided_target(self, path: Path | str) -> str | None:
        """Where ``path`` (from :meth:`resolve`) led when the call was decided, if known."""
        return self.decided.get(str(path)) if self.decided is not None else None

    @property
    def boundary(self) -> tuple[Path, ...]:
        return self.roots or (self.workspace,)


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a tool returns. ``is_error`` marks a tool-level failure (e.g. Bash exit 1)."""

    output: str
    is_error: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)


InputT = TypeVar("InputT", bound="Params | BaseModel")
InputT_contra = TypeVar("InputT_contra", bound="Params | BaseModel", contravariant=True)


@runtime_checkable
class Tool(Protocol[InputT_contra]):
    """What the registry, the permission engine and the executor rely on."""

    name: str
    description: str
    #: the authority on the input's schema and messages (a built-in's is imported lazily)
    input_model: type[BaseModel]
    kind: ToolKind
    is_retry_safe: bool

    def is_concurrency_safe(self, input: InputT_contra, ctx: ToolContext | None = None) -> bool:
        """May this call run beside others? ``ctx`` (cwd, workspace) when known."""
        ...

    def is_read_only(self, input: InputT_contra, ctx: ToolContext | None = None) -> bool: ...

    def affected_paths(self, input: InputT_contra, ctx: ToolContext) -> tuple[Path, ...]:
        """Absolute (normalised, not symlink-resolved) paths the call reads or writes."""
        ...

    async def run(self, input: InputT_contra, ctx: ToolContext) -> ToolOutput: ...


Concurrency = Literal["always", "never", "read-only input"]


def concurrency_of(tool: Tool[Any]) -> Concurrency:
    """How a tool's concurrency safety is described in ``toolrun tools``."""
    value = getattr(tool, "concurrency", "never")
    if value == "always":
        return "always"
    if value == "read-only input":
        return "read-only input"
    return "never"


class BaseTool(Generic[InputT]):
    """Convenience base with fail-closed defaults: not concurrency-safe, not read-only."""

    # Plain (not ClassVar) attributes so that subclasses satisfy the Tool protocol.
    name: str
    description: str = ""
    input_model: type[BaseModel]
    #: a built-in tool's stdlib validator (see :mod:`toolrun.tools.inputs`); its model
    #: becomes ``input_model``, imported on first use
    input_spec: InputSpec | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("input_spec")
        if spec is not None and "input_model" not in cls.__dict__:
            from toolrun.tools.inputs import LazyModel

            setattr(cls, "input_model", LazyModel(spec))  # noqa: B010 (a descriptor)
    kind: ToolKind
    is_retry_safe: bool = False
    # For display only (`toolrun tools`); is_concurrency_safe() is what decides.
    concurrency: Concurrency = "never"

    def is_concurrency_safe(self, input: InputT, ctx: ToolContext | None = None) -> bool:
        return False

    def is_read_only(self, input: InputT, ctx: ToolContext | None = None) -> bool:
        return self.kind is ToolKind.READ

    def affected_paths(self, input: InputT, ctx: ToolContext) -> tuple[Path, ...]:
        return ()

    async def run(self, input: InputT, ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError
