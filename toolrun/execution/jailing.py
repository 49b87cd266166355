"""Which Bash calls run in the read-only jail, and the jail each of them runs in (#25).

A Bash call the engine allowed on its own judgement (``CallDecision.jail == "read-only"``)
runs in the run's jail (:mod:`toolrun.sandbox.jail`); every other call runs as the user
configured it. The jail is made on the first such call, from the Read-denied paths the
tree holds then, and made again only when a call that may have changed the tree (one
that ran outside the jail and is not a plain read) has run since and the masks differ.

Where no jail can be made (no bubblewrap, no user namespaces), toolrun says so once per
run and the call runs as before (its result says ``enforced: false``).

``TOOLRUN_TEST_JUDGE_ALL=read-only`` (test-only: it exists so that tests can prove the
jail independently of the command reading) jails every allowed Bash call, whatever the
decision said.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.execution.results import Status

if TYPE_CHECKING:
    from toolrun.execution.invocation import Outcome
    from toolrun.execution.results import CallDecision
    from toolrun.plan.models import Call
    from toolrun.reaper.jail import Jail

#: Test-only: every allowed Bash call is jailed read-only (see the module docstring).
JUDGE_ALL_ENV = "TOOLRUN_TEST_JUDGE_ALL"
WARNING = "toolrun: warning: "
#: How a call's error begins when the side process ended before it started the command
#: (toolrun.reaper.link).
NEVER_STARTED = "the reaper side process ended before "

#: ``path -> whether a Read of it is denied``.
Denied = Callable[[str], bool]


class JailKeeper:
    """The run's jail: made when first needed, made again when what it masks changed."""

    def __init__(
        self,
        roots: Sequence[Path],
        denied: Denied | None,
        *,
        also: Sequence[str] = (),
        warn: Callable[[str], None] | None = None,
        wanted: bool = True,
    ) -> None:
        self._roots = [str(r) for r in roots]
        self._denied = denied
        self._also = tuple(also)
        self._warn = warn if warn is not None else _to_stderr
        self._judge_all = os.environ.get(JUDGE_ALL_ENV) == "read-only"
        self._wanted = wanted or self._judge_all
        self._started = False  # (prestart: once per run)
        self._lock = threading.Lock()
        self._jail: Jail | None = None
        self._stale = True  # the masks must be worked out (again) before the next call
        #: Why no jail can be made here (said once), or None.
        self.unavailable: str | None = None
        self._made = False  # a jail was made (a dry run: could be) for a judged call

    @property
    def enforced(self) -> bool | None:
        """The run's claim (#25): False when a call meant for a jail ran (would run) without
        one, True when every jail asked for was made, None when no call asked for one."""
        return False if self.unavailable is not None else (True if self._made else None)

    def probed(self, bwrap_path: str | None = None) -> str | None:
        """Why no jail can be made here (None: one can), without making one: for a call
        meant for a jail that does not run (a dry run, a check). Counts for :attr:`enforced`."""
        if self.unavailable is None and not self._made:
            from toolrun.sandbox.availability import probe

            found = probe(bwrap_path)
            if found.ok and found.bwrap is not None:
                self._made = True
            else:
                self.unavailable = found.reason or "bubblewrap cannot run here"
        return self.unavailable

    def kind(self, call: Call, decision: CallDecision) -> str | None:
        """Where the call must run: ``"read-only"``, or None (as the user configured)."""
        if call.tool != "Bash" or decision.decision != "allow":
            return None
        if self._judge_all:
            return "read-only"
        return "read-only" if decision.jail == "read-only" else None

    def ran_outside(self) -> None:
        """A call that may change the tree ran outside the jail: look at the masks again."""
        self._stale = True

    def jail(self, bwrap_path: str | None = None) -> Jail | None:
        """The jail for the next jailed call, or None where none can be made.

        ``bwrap_path``: the user's ``sandbox.bwrapPath``; the jail uses the bubblewrap the
        user named, and where that one cannot run, the user's sandbox settings decide
        (``failIfUnavailable``), as for any other call."""
        with self._lock:
            if self.unavailable is not None:
                return None
            if self._jail is not None and not self._stale:
                return self._jail
            from toolrun.sandbox.availability import probe

            found = probe(bwrap_path)
            if not found.ok or found.bwrap is None:
                self.unavailable = found.reason or "bubblewrap cannot run here"
                self._warn(
                    f"{WARNING}read-only calls run unjailed (enforced: false): "
                    f"{self.unavailable}"
                )
                return None
            plan = self._plan()
            self._stale = False
            if self._jail is None:
                from toolrun.reaper.jail import Jail

                self._jail = Jail(found.bwrap, plan)
                self._made = True
            else:
                self._jail.rebuild(plan)
            return self._jail

    def prestart(self, bwrap_path: str | None = None) -> None:
        """Make the jail in the background (a call that needs it first waits for it).
        Only where the engine judges calls at all (``toolrun.enforce`` not off)."""
        if not self._wanted or self._started:
            return
        self._started = True

        def make() -> None:
            jail = self.jail(bwrap_path)
            if jail is not None:
                jail.side.prestart()

        threading.Thread(target=make, name="toolrun-jail", daemon=True).start()

    def close(self) -> None:
        """The run is over: end its jail (a later call makes a new one)."""
        with self._lock:
            jail, self._jail = self._jail, None
            self._stale = True
            self._started = False
        if jail is not None:
            jail.close()

    def never_started(self, outcome: Outcome, jail: Jail) -> bool:
        """Whether the jail's side process ended before it started the command (it died
        while the command was sent, or before it was started); if so no jail is made again
        in this run (said once)."""
        if outcome.status is not Status.ERROR:
            return False
        error = outcome.error or ""
        died = jail.side.pid == 0 and "exit_code" not in outcome.metadata
        if not (error.startswith(NEVER_STARTED) or died):
            return False
        with self._lock:
            if self.unavailable is None:
                self.unavailable = "the jail could not start (its bubblewrap ended at once)"
                self._warn(f"{WARNING}read-only calls run unjailed (enforced: false): "
                           f"{self.unavailable}")
        return True

    def _plan(self) -> Any:
        from toolrun.sandbox.jail import plan_jail

        if self._denied is None:
            # no Read deny or ask rule: nothing under the roots is masked, so the tree is not
            # walked (the walk of a workspace with a .venv took 100 ms of a one-call exec)
            return plan_jail((), lambda _: False, also=self._also)
        return plan_jail(self._roots, self._denied, also=self._also)

    def finish(self, outcome: Outcome, jail: Jail | None, cwd: Path) -> Outcome:
        """The outcome of a call meant for the jail: what the jail blocked, and where it ran."""
        if jail is None:
            info: dict[str, Any] = {
                "kind": "read-only", "enforced": False, "reason": self.unavailable,
            }
            return replace(outcome, metadata={**outcome.metadata, "jail": info})
        from toolrun.sandbox.jail import blocked_writes

        where = str(outcome.metadata.get("cwd") or cwd)
        notes = blocked_writes(outcome.output, where)
        info = {"kind": "read-only", "enforced": True, "blocked": notes}
        if jail.plan.truncated:
            info["masks_truncated"] = True
        output = outcome.output
        if notes:
            output += ("" if not output or output.endswith("\n") else "\n")
            output += "".join(f"[jail] {note}\n" for note in notes)
        return replace(outcome, output=output, metadata={**outcome.metadata, "jail": info})


def _to_stderr(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def read_denied(engine: Any) -> Denied | None:
    """``path -> denied`` from a permission engine (only a deny masks: a protected path
    that asks, ``.git/config`` say, is read by the programs that need it)."""
    decide = getattr(engine, "decide", None)
    if decide is None or not getattr(engine, "read_guarded", True):
        return None  # (no Read deny or ask rule: nothing to mask)

    def denied(path: str) -> bool:
        return bool(decide("Read", {"file_path": path}).decision == "deny")

    return denied


def literal_denies(engine: Any) -> tuple[str, ...]:
    """The Read deny rules' literal paths (``~/.ssh/id_rsa``, ``/etc/secret``), which the
    walk of the workspace would not reach; as the sandbox reads them."""
    config = getattr(engine, "config", None)
    if config is None:
        return ()
    try:
        from toolrun.sandbox.policy import SandboxPolicy

        return tuple(SandboxPolicy.of(config).settings.deny_read)
    except Exception:  # noqa: BLE001 - the walk still masks what is under the roots
        return ()
