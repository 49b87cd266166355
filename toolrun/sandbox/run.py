"""One Bash call under the sandbox: placement, mounts, proxy, and what the result says.

The Bash tool hands over a function that runs the shell with an optional
launcher; the launcher turns ``bash -c COMMAND`` into ``bwrap ... bash -c
COMMAND`` (through the network bridge when domains are allowed). Everything else
the Bash tool does (working-directory carry, process-group kill, timeouts,
Ctrl-C) is unchanged: the process it starts and kills is bwrap, and bwrap's PID
namespace takes every process of the call down with it.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.errors import ToolError
from toolrun.sandbox.bridge import bridge_command, proxy_env
from toolrun.sandbox.bwrap import bwrap_argv, folders, pid_1_shim, seccomp_program_fd
from toolrun.sandbox.mounts import MountPlan, held_placeholders, plan_mounts
from toolrun.sandbox.policy import Placement, SandboxPolicy
from toolrun.sandbox.proxy import DomainPolicy, DomainProxy
from toolrun.sandbox.seccomp import unix_socket_filter
from toolrun.sandbox.violations import blocked_hosts_offline, blocked_writes

if TYPE_CHECKING:
    from toolrun.tools.base import ToolContext, ToolOutput

Launch = tuple[list[str], Mapping[str, str], tuple[int, ...]]
Launcher = Callable[[list[str], Path, Mapping[str, str]], Launch]
Execute = Callable[[Any, "ToolContext", "Launcher | None"], Awaitable["ToolOutput"]]
WARNING_PREFIX = "toolrun: warning: "


async def run_bash(
    policy: SandboxPolicy, input: Any, ctx: ToolContext, execute: Execute
) -> ToolOutput:
    from toolrun.tools.inputs import as_dict

    placement = policy.placement(as_dict(input))
    if placement.leaves_on_request and policy.settings.allow_unsandboxed:
        return _noted(await execute(input, ctx, None), placement, warning=None)
    if placement.kind == "error":
        raise ToolError(placement.reason)
    if placement.kind == "unavailable":
        warning = f"running unsandboxed: {policy.availability().reason}"
        return _noted(await execute(input, ctx, None), placement, warning=warning)
    found = policy.availability()
    if not found.ok or found.bwrap is None:
        # Asked to leave but not allowed to, and no sandbox here either: fail closed.
        raise ToolError(f"cannot run sandboxed: {found.reason}")
    settings = policy.settings
    plan = plan_mounts(
        roots=[str(policy.workspace), *(str(d) for d in policy.additional_directories)],
        allow_write=settings.allow_write,
        deny_write=settings.deny_write,
        deny_read=settings.deny_read,
        allow_read=settings.allow_read,
        extra_writable=[str(folders().tmp)],
    )
    proxy: DomainProxy | None = None
    if settings.allowed_domains is not None:
        path = str(folders().control / f"proxy-{os.getpid()}-{next(_numbers)}.sock")
        domains = DomainPolicy.of(
            settings.allowed_domains,
            policy.denied_domains,
            settings.allow_private_hosts,
            settings.denied_domains,
        )
        proxy = DomainProxy(path, domains)
    plan = held_placeholders.hold(plan)
    launcher = _launcher(policy, found.bwrap, plan, proxy)
    try:
        output = await execute(input, ctx, launcher)
    finally:
        if proxy is not None:
            proxy.close()
    if output.metadata.get("exit_code") == 1 and output.output.startswith("bwrap: "):
        # bwrap's own failure (a mount it could not make): the command never ran.
        raise ToolError(f"the sandbox could not start: {output.output.splitlines()[0]}")
    # A relative path in an error message is most likely relative to where the shell
    # ended up (`cd .. && echo x > f`).
    cwd = output.metadata.get("cwd") or str(ctx.cwd)
    notes = blocked_writes(output.output, str(cwd), plan.read_only)
    if proxy is not None:
        notes += [
            f"connection blocked by the sandbox: {why}" for why in dict.fromkeys(proxy.blocked)
        ]
    else:
        notes += blocked_hosts_offline(output.output)
    return _with(output, notes, {"sandboxed": True, "blocked": notes})


def _launcher(
    policy: SandboxPolicy, bwrap: str, plan: MountPlan, proxy: DomainProxy | None
) -> Launcher:
    settings = policy.settings
    program = b"" if settings.allow_all_unix_sockets else unix_socket_filter() or b""

    def launch(argv: list[str], cwd: Path, env: Mapping[str, str]) -> Launch:
        inner = {k: v for k, v in env.items() if k not in settings.hidden_env}
        inner["TMPDIR"] = str(folders().tmp)
        bind_files = []
        cwd_file = inner.get("TOOLRUN_CWD_FILE")
        if cwd_file:
            # The probe's file must exist to be bound writable into the sandbox.
            os.close(os.open(cwd_file, os.O_CREAT | os.O_WRONLY, 0o600))
            bind_files.append(cwd_file)
        fds: tuple[int, ...] = ()
        command = pid_1_shim(argv)
        if proxy is not None:
            command = bridge_command(proxy.path, program, command)
            proxy_env(inner)
            seccomp_fd = None
        else:
            seccomp_fd = seccomp_program_fd(program) if program else None
            fds = () if seccomp_fd is None else (seccomp_fd,)
        wrapped = bwrap_argv(
            bwrap,
            plan,
            cwd=str(cwd),
            command=command,
            unreadable_file=folders().unreadable_file,
            bind_files=bind_files,
            seccomp_fd=seccomp_fd,
        )
        return wrapped, inner, fds

    return launch


def _noted(output: ToolOutput, placement: Placement, *, warning: str | None) -> ToolOutput:
    """An unsandboxed call's output: why it ran outside, and the warning first if any."""
    info: dict[str, Any] = {"sandboxed": False, "reason": placement.reason}
    if warning is None:
        return _with(output, [], info)
    info["warning"] = warning
    return _with(output, [], info, before=f"{WARNING_PREFIX}{warning}\n")


def _with(
    output: ToolOutput, notes: list[str], info: dict[str, Any], *, before: str = ""
) -> ToolOutput:
    """The output with ``notes`` appended as ``[sandbox]`` lines, and ``info`` in metadata."""
    from toolrun.tools.base import ToolOutput

    text = before + output.output
    if notes:
        text = text + ("" if not text or text.endswith("\n") else "\n")
        text += "".join(f"[sandbox] {note}\n" for note in notes)
    return ToolOutput(text, output.is_error, {**output.metadata, "sandbox": info})


_numbers = itertools.count(1)
