"""``toolrun hook`` as a library function: one hook payload in, the agent's answer out.

The call is decided as ``toolrun check`` decides it: the config found from the workspace
(``--workspace``, else ``$CLAUDE_PROJECT_DIR`` / ``$GEMINI_PROJECT_DIR``, the project the
session started in, else the payload's ``cwd``), the mode the agent reports
(``permission_mode``; the config's when it reports none), the Bash working directory the
payload's ``cwd``, protected paths, the rule self-tests. Which decisions are answered, and
how, is :mod:`toolrun.live.answer`'s; each is journalled (:mod:`toolrun.live.session`).
The config's own hooks are not run: the agent runs its hooks itself, and ``toolrun
hook`` is one of them (running them again would run each twice, and this one forever).

Nothing here raises: a payload toolrun cannot read, a config it cannot use, a journal it
cannot write and its own bugs all become a :class:`HookReply`. An error is exit 1 with a
message on stderr (both agents: a non-blocking error, the call goes on as if toolrun were
not there); ``fail="closed"`` answers deny instead. Exit 2 (a block) is never used: the
deny is said in JSON, with its reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from toolrun.errors import HookInputError, ToolrunError

if TYPE_CHECKING:
    from toolrun.live.answer import Verdict
    from toolrun.live.engines import Engines
    from toolrun.live.payload import HookCall, Protocol, SessionEnded, SessionStarted

Fail = Literal["open", "closed"]
#: where each agent says the session's project is
PROJECT_ENV = {"claude": "CLAUDE_PROJECT_DIR", "gemini": "GEMINI_PROJECT_DIR"}


@dataclass(frozen=True, slots=True)
class HookOptions:
    protocol: Protocol | None = None  # None: from the payload (BeforeTool: Gemini)
    fail: Fail = "open"
    allow_read_only: bool = False
    workspace: Path | None = None
    config_file: Path | None = None
    settings_files: tuple[Path, ...] = ()
    journal: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "fail": self.fail,
            "allow_read_only": self.allow_read_only,
            "workspace": str(self.workspace) if self.workspace is not None else None,
            "config_file": str(self.config_file) if self.config_file is not None else None,
            "settings_files": [str(p) for p in self.settings_files],
            "journal": self.journal,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HookOptions:
        def path(value: object) -> Path | None:
            return Path(str(value)) if value is not None else None

        return cls(
            protocol=data.get("protocol"),
            fail=data.get("fail", "open"),
            allow_read_only=bool(data.get("allow_read_only")),
            workspace=path(data.get("workspace")),
            config_file=path(data.get("config_file")),
            settings_files=tuple(Path(p) for p in data.get("settings_files", ())),
            journal=bool(data.get("journal", True)),
        )


@dataclass(frozen=True, slots=True)
class HookReply:
    """What ``toolrun hook`` prints and exits with."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    #: the decision, when one was made (for the API and the tests)
    verdict: Verdict | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"stdout": self.stdout, "stderr": self.stderr, "exit_code": self.exit_code}


def workspace_of(
    hook: HookCall | SessionEnded | SessionStarted,
    options: HookOptions,
    env: Mapping[str, str],
    cwd: Path,
) -> Path:
    """The workspace a hook call is decided in (see the module's docstring); relative
    paths are taken from ``cwd``, the directory the hook runs in."""
    if options.workspace is not None:
        return cwd / options.workspace
    project = env.get(PROJECT_ENV[hook.protocol]) or env.get("CLAUDE_PROJECT_DIR")
    if project:
        return cwd / project
    if hook.cwd:
        return cwd / hook.cwd
    return cwd


def failure(message: str, options: HookOptions, protocol: str, event: str) -> HookReply:
    """What toolrun says when it cannot decide: exit 1, or a deny under ``fail: closed``."""
    if options.fail == "closed":
        from toolrun.live.answer import error_output

        out = error_output(protocol, event, message)
        return HookReply(json.dumps(out, ensure_ascii=False) + "\n", message + "\n", 0)
    return HookReply("", message + "\n", 1)


def answer_hook(
    raw: bytes,
    options: HookOptions,
    *,
    env: Mapping[str, str] | None = None,
    engines: Engines | None = None,
    cwd: Path | None = None,
) -> HookReply:
    """Decide the call of one hook payload and say it as the agent reads it (``cwd``:
    the hook's directory, for relative paths; ``engines``: configs kept loaded)."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    protocol: str = options.protocol or "claude"
    event = "BeforeTool" if protocol == "gemini" else "PreToolUse"
    try:
        from toolrun.live.payload import SessionEnded, SessionStarted, parse_payload

        hook = parse_payload(raw, options.protocol)
        if isinstance(hook, SessionEnded):
            return _end(hook, options, env, cwd)
        if isinstance(hook, SessionStarted):
            return _start(hook, options, env, engines, cwd)
        protocol, event = hook.protocol, hook.event
        return _answer(hook, options, env, engines, cwd)
    except ToolrunError as exc:
        message = str(exc) or type(exc).__name__
        if not message.startswith("toolrun hook:"):
            message = f"toolrun hook: {message}"
        return failure(message, options, protocol, event)
    except Exception as exc:  # noqa: BLE001 - a bug of toolrun's: said, never a traceback
        return failure(
            f"toolrun hook: internal error: {type(exc).__name__}: {exc}", options, protocol, event
        )


def _answer(
    hook: HookCall,
    options: HookOptions,
    env: Mapping[str, str],
    engines: Engines | None,
    here: Path,
) -> HookReply:
    from toolrun.live.answer import claude_output, gemini_output, strictest, verdict
    from toolrun.live.engines import load
    from toolrun.live.payload import gemini_cwd

    started = time.perf_counter()
    workspace = workspace_of(hook, options, env, here)
    if not workspace.is_dir():
        raise HookInputError(f"toolrun hook: the workspace {workspace} is not a directory")
    settings = tuple(here / p for p in options.settings_files)
    config_file = here / options.config_file if options.config_file is not None else None
    if engines is not None:
        loaded = engines.get(workspace, config_file=config_file, settings_files=settings, env=env)
    else:
        loaded = load(workspace, config_file=config_file, settings_files=settings, env=env)
    engine = loaded.engine
    cwd = gemini_cwd(hook.tool, hook.input, hook.cwd) if hook.protocol == "gemini" else hook.cwd
    call_cwd = here / cwd if cwd else None
    _registry_for(engine, hook.calls)
    decisions = [
        engine.decide(tool, tool_input, cwd=call_cwd, mode=hook.mode)
        for tool, tool_input in hook.calls
    ]
    chosen = verdict(
        strictest(decisions),
        allow_read_only=options.allow_read_only,
        classifier=hook.agent_mode == "auto",
    )
    if hook.protocol == "gemini":
        out: dict[str, Any] | None = gemini_output(chosen.answer, chosen.reason)
    else:
        out = claude_output(hook.event, chosen.answer, chosen.reason)
    stdout = json.dumps(out, ensure_ascii=False) + "\n" if out is not None else ""
    stderr = ""
    if options.journal:
        notes = (hook.mode_note,) if hook.mode_note else ()
        try:
            from toolrun.live.session import record
            from toolrun.paths import display_path

            record(
                engine.config.workspace,
                hook,
                chosen,
                config_files=tuple(display_path(f) for f in loaded.config.files),
                duration_ms=(time.perf_counter() - started) * 1000,
                notes=notes,
                warm=engines is not None,
            )
        except OSError as exc:  # the decision stands; what was not recorded is said
            where = exc.filename or "the journal"
            stderr = f"toolrun hook: decision not journalled: {where}: {exc.strerror or exc}\n"
    return HookReply(stdout, stderr, 0, chosen)


def _start(
    hook: SessionStarted,
    options: HookOptions,
    env: Mapping[str, str],
    engines: Engines | None,
    here: Path,
) -> HookReply:
    """SessionStart: nothing is printed (no context is added). In the warm server the
    workspace's config is loaded and its engine compiled now, so the session's first tool
    call is answered warm; the client starts the server when none runs. A config that
    cannot be used is said at the first call, where it denies or errs as configured."""
    if engines is None:
        return HookReply()
    workspace = workspace_of(hook, options, env, here)
    settings = tuple(here / p for p in options.settings_files)
    config_file = here / options.config_file if options.config_file is not None else None
    with contextlib.suppress(ToolrunError, OSError):
        loaded = engines.get(workspace, config_file=config_file, settings_files=settings, env=env)
        # one decision of each kind loads what deciding needs (the Bash parser, the rules'
        # matchers); nothing is journalled: no call was made
        loaded.engine.decide("Bash", {"command": "ls"})
        loaded.engine.decide("Read", {"file_path": str(workspace / "README.md")})
    return HookReply()


def _end(hook: SessionEnded, options: HookOptions, env: Mapping[str, str], here: Path) -> HookReply:
    """SessionEnd: the session's run gets its end record (``toolrun runs`` then lists it
    as finished, and ``runs prune`` may delete it); nothing is printed."""
    if not options.journal:
        return HookReply()
    from toolrun.live.session import end

    workspace = workspace_of(hook, options, env, here)
    try:
        end(workspace, hook)
    except OSError as exc:
        where = exc.filename or "the journal"
        why = exc.strerror or exc
        return HookReply("", f"toolrun hook: session end not journalled: {where}: {why}\n")
    return HookReply()


def _registry_for(engine: Any, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    """The tool registry, loaded only for a tool that is neither built in nor MCP (an
    entry-point tool declares which of its fields are paths): as explain-permission does."""
    from toolrun.permissions.tool_subjects import BUILTIN_TOOLS

    if engine.registry is None and any(
        t not in BUILTIN_TOOLS and not t.startswith("mcp__") for t, _ in calls
    ):
        from toolrun.tools.registry import default_registry

        engine.registry = default_registry()
