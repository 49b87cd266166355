"""Which Bash calls run jailed, and where every call runs (#25, design §10).

A call allowed on toolrun's *own judgement* (the read-only set, acceptEdits' workspace
file commands) runs in a jail that makes the judgement true: the kernel, not the
reading of the command, keeps it read-only or inside the workspace. A call approved
by the user's rule, a hook or a person runs as the user configured it (sandboxed when
``sandbox.enabled``), exactly as before.

What bypassPermissions allows outside the user's sandbox is the user's own choice, but the
rules still hold: it runs in the masks-only jail (:func:`bypass_runs_in`), the filesystem
and the network as configured, Read-denied paths masked, Edit-denied and protected paths
and the git configuration surface read-only. Where no jail can be made it runs as before
(said once per run); ``toolrun.enforce: required`` does not make it ask (bypass asks for
nothing), ``off`` runs it as configured.

Mixed calls (``npm test | tail -5`` with ``Bash(npm test)`` allowed): a read-only jail
would break the rule's part, so the call runs as configured and its judged parts are not
enforced. That is said (``runs_in_why``), and under ``toolrun.enforce: required`` such a
call asks, unless its judged parts are only shell builtins (``cd src && npm test``):
bash runs those itself, and they change nothing a jail would keep.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from toolrun.config.models import Enforce
from toolrun.dataclass_init import fast_init

if TYPE_CHECKING:
    from toolrun.permissions.rules import Subject
    from toolrun.permissions.verdict import Verdict

JailKind = Literal["read-only", "workspace", "masks"]
Place = Literal["read-only jail", "workspace jail", "masks-only jail", "sandbox", "unsandboxed"]

#: Commands bash runs itself that change nothing but the shell's own state (the
#: read-only verdict has already refused their writing forms: `printf -v`, redirects).
SHELL_BUILTINS = frozenset(
    {"cd", "pushd", "popd", "true", "false", ":", "test", "[", "pwd", "echo", "printf"}
)

_JAIL_PLACE: dict[str, Place] = {
    "read-only": "read-only jail",
    "workspace": "workspace jail",
    "masks": "masks-only jail",
}


@fast_init
@dataclass(frozen=True, slots=True)
class Judgement:
    """What toolrun's own judgement contributed to an allowed Bash call."""

    #: the jail the judged parts need (None: nothing was judged)
    jail: JailKind | None = None
    #: a judged part is more than a shell builtin: only a jail makes it true
    needed: bool = False
    #: the first part a rule approved (quoted): the call then runs as configured
    ruled: str | None = None

    @property
    def mixed(self) -> bool:
        """A rule approved a part, and another part stands on toolrun's judgement."""
        return self.ruled is not None and self.needed


def judge(subjects: Iterable[tuple[Subject, Verdict]]) -> Judgement:
    """Which allowed parts of a call stand on toolrun's judgement, which on a rule.

    Read-only verdicts need a read-only jail; acceptEdits' workspace writes (file
    commands, redirects) a workspace jail. A read a Read rule allows outside the
    workspace needs nothing (every jail can read it); any other part a rule allowed
    (the command, a write an Edit rule allows) must run as configured.
    """
    jail: JailKind | None = None
    needed = False
    ruled: str | None = None
    for s, verdict in subjects:
        if verdict.step is None or verdict.decision != "allow":
            continue
        step = verdict.step
        if step == "allow_rule":
            if ruled is None and (s.kind == "command" or s.effect != "read"):
                ruled = "`" + " ".join(s.label.split())[:80] + "`"
            continue
        if step in ("readonly", "workspace_read"):
            jail = jail or "read-only"
        elif step == "workspace_write":
            jail = "workspace"
        else:
            continue
        command = s.command
        if command is None or command.name not in SHELL_BUILTINS or step != "readonly":
            needed = True
    return Judgement(jail, needed, ruled)


@fast_init
@dataclass(frozen=True, slots=True)
class RunsIn:
    """Where a call runs and why (Bash only: the other tools run inside toolrun)."""

    place: Place
    why: str
    #: where it would run without a jail: what a hook's or a person's allow runs it in
    configured: Place = "unsandboxed"

    def text(self) -> str:
        return f"{self.place} ({self.why})"


def configured_place(sandboxed: bool) -> Place:
    """Where a call runs that no jail holds: the user's sandbox, or not sandboxed."""
    return "sandbox" if sandboxed else "unsandboxed"


def runs_in(
    *,
    jail: str | None,
    judgement: Judgement,
    sandboxed: bool,
    enforce: Enforce,
    unavailable: str | None,
    decided: str,
) -> RunsIn:
    """Where an allowed (or approvable) call runs, and why, in a few words.

    ``unavailable``: why no jail can be made here (None: it can, or nobody asked);
    ``decided``: who allowed it, when no jail holds it ("a rule", "bypassPermissions").
    """
    configured = configured_place(sandboxed)
    if jail is not None:
        kind = "the read-only set" if jail == "read-only" else "acceptEdits' workspace commands"
        if unavailable is not None:
            return RunsIn(
                configured,
                f"allowed on toolrun's judgement ({kind}), but no jail "
                f"can be made here: {unavailable}",
                configured,
            )
        return RunsIn(_JAIL_PLACE[jail], f"allowed on toolrun's judgement ({kind})", configured)
    if judgement.jail is not None and enforce == "off":
        return RunsIn(
            configured, "allowed on toolrun's judgement; toolrun.enforce: off", configured
        )
    if judgement.mixed:
        return RunsIn(
            configured,
            f"{judgement.ruled} is allowed by a rule, so the call runs "
            "as configured; its other parts are not enforced",
            configured,
        )
    return RunsIn(configured, f"allowed by {decided}: runs as configured", configured)


def bypass_runs_in(
    judgement: Judgement, *, sandboxed: bool, enforce: Enforce
) -> tuple[JailKind | None, RunsIn]:
    """The jail of a call bypassPermissions allows, and where it runs: the masks-only
    jail, unless it runs in the user's sandbox (which carries the same masks), a rule
    approved a part of it (as configured, like any rule's allow) or enforce is off."""
    configured = configured_place(sandboxed)
    if sandboxed or enforce == "off" or judgement.ruled is not None:
        return None, RunsIn(
            configured, "allowed by bypassPermissions: runs as configured", configured
        )
    return "masks", RunsIn(
        "masks-only jail",
        "allowed by bypassPermissions: runs as "
        "configured, with the rules' masks (Read-denied paths hidden, "
        "Edit-denied and protected paths read-only)",
        configured,
    )


def lazy_probe(probe: Callable[[], Any]) -> Callable[[], str | None]:
    """``probe`` (an availability check) run on first need only, then remembered: why no
    jail can be made here, or None. (A check of plans without Bash calls never runs it.)"""
    found: list[str | None] = []

    def reason() -> str | None:
        if not found:
            found.append(probe().reason)
        return found[0]

    return reason


def as_placed_here(decision: Any, unavailable: Callable[[], str | None]) -> Any:
    """The decision with ``runs_in`` as this machine would place it: a jailed call where no
    jail can be made (no bubblewrap, no user namespaces) runs as configured, and says why.

    The engine probes only under ``enforce: required`` (a probe costs a check tens of ms);
    one call's explanation (explain-permission) can afford it, and must not claim a jail
    the executor could not make.
    """
    import dataclasses

    where = decision.runs_in
    if where is None or where.place not in (*_JAIL_PLACE.values(), "masks-only jail"):
        return decision
    reason = unavailable()
    if reason is None:
        return decision
    moved = RunsIn(where.configured, f"{where.why}, but no jail can be made here: {reason}",
                   where.configured)  # fmt: skip
    return dataclasses.replace(decision, runs_in=moved)
