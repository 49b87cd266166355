"""One Bash call under the sandbox: placement, the run's sandbox, and what the result says.

The Bash tool hands over a function that runs the shell with an optional launcher. A
sandboxed call runs in its run's sandbox (:mod:`toolrun.sandbox.session`): the launcher
gives the command its environment there, and the command is started by the sandbox's
reaper side process (:data:`toolrun.reaper.sandboxed.current`, set around the call).
Everything else the Bash tool does (working-directory carry, timeouts, Ctrl-C, the kill of
the call's process group and of whatever it left) is unchanged: the side process inside
the sandbox does for it what toolrun's own does for an unsandboxed call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.errors import ToolError
from toolrun.reaper import sandboxed
from toolrun.sandbox.policy import Placement, SandboxPolicy
from toolrun.sandbox.session import session_for
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
    session = session_for(policy, found.bwrap)
    plan, inside = session.enter()
    token = sandboxed.current.set(inside)
    try:
        with session.tally() as refused:
            output = await execute(input, ctx, session.launch)
    except OSError as exc:
        why = session.start_failure()
        if why is None:
            raise
        # bwrap's own failure (a mount it could not make): the command never ran.
        raise ToolError(f"the sandbox could not start: {why}") from exc
    finally:
        sandboxed.current.reset(token)
    # A relative path in an error message is most likely relative to where the shell
    # ended up (`cd .. && echo x > f`).
    cwd = output.metadata.get("cwd") or str(ctx.cwd)
    notes = blocked_writes(output.output, str(cwd), plan.read_only)
    if session.proxy is not None:
        notes += [f"connection blocked by the sandbox: {why}" for why in dict.fromkeys(refused)]
    else:
        notes += blocked_hosts_offline(output.output)
    return _with(output, notes, {"sandboxed": True, "blocked": notes})


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

