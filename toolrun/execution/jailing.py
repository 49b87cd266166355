"""Which Bash calls run in a jail, and the jail each of them runs in (#25).

A Bash call the engine allowed on its own judgement runs where that judgement is true
(``CallDecision.jail``): ``"read-only"`` in the read-only jail, ``"workspace"`` (acceptEdits'
workspace file commands) in the workspace jail; what bypassPermissions allows outside the
user's sandbox (``"masks"``) runs with the rules' masks only. Every other call runs as the
user configured it. What each jail is: :mod:`toolrun.sandbox.jail`.

There is one jail per kind per run, made on the first call of its kind from the tree as
it is then (the Read-denied paths, the configuration surface), and made again only when a
call that may have changed the tree has run since (one outside the jails that is not a
plain read, or one in a writable jail) and its masks differ.

Where no jail can be made (no bubblewrap, no user namespaces), toolrun says so once per
run and the call runs as before (its result says ``enforced: false``).

``TOOLRUN_TEST_JUDGE_ALL=read-only`` (or ``workspace``, ``masks``; test-only: it exists so
that tests can prove the jails independently of the command reading) jails every allowed
Bash call in that kind of jail, whatever the decision said.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.execution.results import Status

if TYPE_CHECKING:
    from toolrun.execution.invocation import Outcome
    from toolrun.execution.results import CallDecision
    from toolrun.plan.models import Call
    from toolrun.reaper.jail import Jail

#: Test-only: every allowed Bash call is jailed in that kind (see the module docstring).
JUDGE_ALL_ENV = "TOOLRUN_TEST_JUDGE_ALL"
#: The kinds of jail (as toolrun.sandbox.jail.KINDS, without loading it).
KINDS = ("read-only", "workspace", "masks")
WARNING = "toolrun: warning: "
#: How a call's error begins when the side process ended before it started the command
#: (toolrun.reaper.link).
NEVER_STARTED = "the reaper side process ended before "
#: What a write the jail refused prints (toolrun.sandbox.violations reads the path from it).
EROFS = "Read-only file system"

#: ``path -> whether a Read of it is denied``.
Denied = Callable[[str], bool]


class JailKeeper:
    """The run's jails, one per kind: each made when first needed, made again when what
    it masks changed."""

    def __init__(
        self,
        roots: Sequence[Path],
        denied: Denied | None,
        *,
        also: Sequence[str] = (),
        read_only: Sequence[str] = (),
        warn: Callable[[str], None] | None = None,
        wanted: bool = True,
    ) -> None:
        self._roots = [str(r) for r in roots]
        self._denied = denied
        self._also = tuple(also)
        self._read_only = tuple(read_only)  # the Edit deny rules' paths
        self._warn = warn if warn is not None else _to_stderr
        judge_all = os.environ.get(JUDGE_ALL_ENV)
        self._judge_all = judge_all if judge_all in KINDS else None
        self._wanted = wanted or self._judge_all is not None
        self._started: set[str] = set()  # (prestart: once per kind per run)
        #: Set before the run's first decision when its calls may run side by side (a
        #: turn of several calls, a concurrency limit above one): a jail then starts all
        #: its side processes at once (:meth:`toolrun.reaper.jail.Jail.prestart`).
        self.overlap = False
        # (its own lock: the jail's is held while the probe is waited for, and every
        # decision looks at _started; deciding the next call must not wait for a probe)
        self._start_lock = threading.Lock()
        self._lock = threading.Lock()
        self._jails: dict[str, Jail] = {}
        self._stale: set[str] = set(KINDS)  # masks to work out (again) before the next call
        self._masks: Any = None  # the Read masks, shared by the kinds (None: stale)
        #: Why no jail can be made here (said once), or None.
        self.unavailable: str | None = None
        self._made = False  # a jail was made (a dry run: could be) for a judged call
        self._verified = False  # the probe said a jail can be made here

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
        """Where the call must run: a kind of jail, or None (as the user configured)."""
        if call.tool != "Bash" or decision.decision != "allow":
            return None
        if self._judge_all is not None:
            return self._judge_all
        return decision.jail if decision.jail in KINDS else None

    def ran_outside(self) -> None:
        """A call that may change the tree ran (outside the jails, or in a writable one):
        look at the masks again."""
        with self._lock:
            self._stale = set(KINDS)
            self._masks = None

    def jail(self, bwrap_path: str | None = None, kind: str = "read-only") -> Jail | None:
        """The jail of ``kind`` for the next call of that kind, or None where none can be made.

        ``bwrap_path``: the user's ``sandbox.bwrapPath``; the jail uses the bubblewrap the
        user named, and where that one cannot run, the user's sandbox settings decide
        (``failIfUnavailable``), as for any other call."""
        # Most calls: the jail is made and still good. Looked at without the lock (each
        # is one read; a jail is in _jails, and out of _stale, only once made), which cost
        # a tenth of a jailed call's own time here.
        if self._verified and self.unavailable is None:
            jail = self._jails.get(kind)
            if jail is not None and kind not in self._stale:
                self._made = True
                return jail
        with self._lock:
            if self.unavailable is not None:
                return None
            from toolrun.sandbox.availability import probe

            if not self._verified:  # (a jail made before the probe's answer waits for it)
                found = probe(bwrap_path)
                if not found.ok or found.bwrap is None:
                    self._drop()
                    self._say_unavailable(found.reason or "bubblewrap cannot run here")
                    return None
                self._verified = True
            jail = self._jails.get(kind)
            if jail is not None and kind not in self._stale:
                self._made = True
                return jail
            plan = self._plan(kind)
            if jail is None:
                from toolrun.reaper.jail import Jail

                jail = self._jails[kind] = Jail(str(probe(bwrap_path).bwrap), plan)
                self._made = True
            else:
                jail.rebuild(plan)
            self._stale.discard(kind)  # (last: the unlocked look above takes it as it is)
            return jail

    def _drop(self) -> None:
        """The probe said no: end the jails started before its answer (the lock is held)."""
        jails, self._jails = list(self._jails.values()), {}
        for jail in jails:
            jail.close()

    def _say_unavailable(self, reason: str) -> None:
        self.unavailable = reason
        self._warn(f"{WARNING}judged and bypass calls run unjailed (enforced: false): {reason}")

    def prestart(self, bwrap_path: str | None = None, kind: str = "read-only") -> None:
        """Start the jail of ``kind`` now, for a judged call decided (a call that needs it
        first waits for it). Only where the engine judges calls at all (``toolrun.enforce``
        not off).

        Its bubblewrap is started from this thread, the probe beside it, without waiting
        for either; the background thread then waits for the probe's answer (and ends the
        jail if it is no) and counts the jail as made. Done all in that thread, which
        fought the loop's for the interpreter lock while the rest of a turn was decided,
        the first calls waited 100-200 ms for the jail on a busy machine. Masks that need a
        walk of the tree are worked out there too."""
        if not self._wanted:
            return
        kind = self._judge_all or kind
        if kind in self._started:  # (every decision asks: no lock when there is nothing to do)
            return
        with self._start_lock:
            if kind in self._started:
                return
            self._started.add(kind)
        if self._denied is None:
            self._start_now(bwrap_path, kind)

        def make() -> None:
            jail = self.jail(bwrap_path, kind)
            if jail is not None:
                jail.prestart(self.overlap)

        _starter.submit(make)

    def _start_now(self, bwrap_path: str | None, kind: str) -> None:
        """The probe and the jail's side process of ``kind`` started, side by side."""
        from toolrun.sandbox.availability import program, start_probe

        start_probe(bwrap_path)
        bwrap = program(bwrap_path)
        with self._lock:
            if bwrap is None or self.unavailable is not None or kind in self._jails:
                return  # (no bubblewrap there: the probe says so)
            from toolrun.reaper.jail import Jail

            jail = self._jails[kind] = Jail(bwrap, self._plan(kind))
            self._stale.discard(kind)
        try:
            jail.prestart(self.overlap)
        except Exception:  # noqa: BLE001, S110 - the first call starts it, or says why not
            pass

    def close(self) -> None:
        """The run is over: end its jails (a later call makes new ones)."""
        with self._start_lock, self._lock:
            jails, self._jails = list(self._jails.values()), {}
            self._stale = set(KINDS)
            self._masks = None
            self._started = set()
        for jail in jails:
            jail.close()

    def never_started(self, outcome: Outcome, jail: Jail) -> bool:
        """Whether the jail's side process ended before it started the command (it died
        while the command was sent, or before it was started); if so no jail is made again
        in this run (said once)."""
        if outcome.status is not Status.ERROR:
            return False
        error = outcome.error or ""
        died = jail.lost() and "exit_code" not in outcome.metadata
        if not (error.startswith(NEVER_STARTED) or died):
            return False
        with self._lock:
            if self.unavailable is None:
                self._say_unavailable("the jail could not start (its bubblewrap ended at once)")
        return True

    def _plan(self, kind: str) -> Any:
        """The plan of a jail of ``kind`` (the lock is held)."""
        from toolrun.sandbox.jail import plan_jail, widen

        masks = self._masks
        if masks is None:
            if self._denied is None:
                # no Read deny or ask rule: nothing under the roots is masked, so the tree is
                # not walked (the walk of a workspace with a .venv took 100 ms of a one-call
                # exec)
                masks = plan_jail((), lambda _: False, also=self._also)
            else:
                masks = plan_jail(self._roots, self._denied, also=self._also)
            self._masks = masks
        return widen(masks, kind, roots=self._roots, deny_write=self._read_only,
                     home=os.path.expanduser("~"))

    def finish(
        self, outcome: Outcome, jail: Jail | None, cwd: Path, kind: str = "read-only"
    ) -> Outcome:
        """The outcome of a call meant for a jail: what the jail blocked, and where it ran."""
        if kind != "read-only":
            self.ran_outside()  # a writable jail: the tree may have changed
        if jail is None:
            info: dict[str, Any] = {"kind": kind, "enforced": False, "reason": self.unavailable}
            return _with(outcome, outcome.output, {**outcome.metadata, "jail": info})
        output = outcome.output
        notes: list[str] = []
        if EROFS in output:  # (most outputs name no blocked write: nothing to read back)
            from toolrun.sandbox.jail import blocked_writes

            where = str(outcome.metadata.get("cwd") or cwd)
            notes = blocked_writes(output, where, jail.plan.place)
        info = {"kind": kind, "enforced": True, "blocked": notes}
        if jail.plan.truncated:
            info["masks_truncated"] = True
        if notes:
            output += ("" if not output or output.endswith("\n") else "\n")
            output += "".join(f"[jail] {note}\n" for note in notes)
        return _with(outcome, output, {**outcome.metadata, "jail": info})


def _with(outcome: Outcome, output: str, metadata: dict[str, Any]) -> Outcome:
    """``outcome`` with another output and metadata (dataclasses.replace looks every field
    up by name: a fifth of this module's time per call)."""
    return type(outcome)(outcome.status, output, outcome.error, outcome.attempts,
                         outcome.started_at, outcome.finished_at, metadata)


class _Starter:
    """The one thread that makes jails in the background, for the whole process.

    bubblewrap's ``--die-with-parent`` is ``PR_SET_PDEATHSIG``, which follows the *thread*
    that started it: a jail spawned from a thread that then ends is killed at once (when
    that thread outlived bubblewrap's start, which a busy GIL makes likely). So jails are
    never started from a thread of their own, only from this one, which lives as long as
    toolrun does.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def submit(self, work: Callable[[], None]) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="toolrun-jails",
                                                daemon=True)
                self._thread.start()
        self._queue.put(work)

    def _serve(self) -> None:
        while True:
            work = self._queue.get()
            try:
                work()
            except Exception:  # noqa: BLE001, S110 - the call that needs the jail makes it again
                pass


_starter = _Starter()


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
    return _sandbox_paths(engine)[0]


def edit_denies(engine: Any) -> tuple[str, ...]:
    """The Edit deny rules' paths (and ``sandbox.filesystem.denyWrite``), as the sandbox
    reads them: read-only in the writable jails."""
    return _sandbox_paths(engine)[1]


def _sandbox_paths(engine: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    config = getattr(engine, "config", None)
    if config is None:
        return (), ()
    try:
        from toolrun.sandbox.policy import SandboxPolicy

        settings = SandboxPolicy.of(config).settings
    except Exception:  # noqa: BLE001 - the walk still masks what is under the roots
        return (), ()
    return tuple(settings.deny_read), tuple(settings.deny_write)
