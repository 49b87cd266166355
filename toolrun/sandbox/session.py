"""The user's sandbox for a run: one bubblewrap, a reaper side process inside it, one proxy.

A sandboxed Bash call used to start a bubblewrap of its own (5.6 ms a call here, #31). Now
the sandbox is made once, from the call's mount plan, with a reaper side process
(:mod:`toolrun.reaper.side`) as its PID 1 that starts every sandboxed command of the run
(:mod:`toolrun.reaper.sandboxed`), as the read-only jail does (:mod:`toolrun.reaper.jail`).
The side process kills what each call leaves, so no process outlives its call; when
toolrun lets go of it (or dies), it ends, and the kernel ends the sandbox's PID namespace.

The mount plan is still worked out for every call (about 0.2 ms): the call before may
have changed the tree (a new ``.env`` that ``denyRead`` masks, a ``.bashrc``), from inside
the sandbox or outside it (an Edit, an excluded command, another program). The sandbox is
made again, for the calls from then on, when the plan differs from the one it was made
from, or when a path it binds is no longer the file it bound: the kernel detaches a bind
whose mount point was unlinked outside, so a masked file replaced by a rename would
otherwise be readable inside. Calls still running in the old sandbox end there.

One :class:`~toolrun.sandbox.proxy.DomainProxy` serves the sandbox's run, deciding every
connection by the policy; each call's result names what was refused while it ran.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
import threading
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from toolrun.errors import ToolError
from toolrun.reaper import sandboxed
from toolrun.reaper.link import Wrap, _SideProcess, side_process
from toolrun.sandbox.bridge import bridge_command, proxy_env
from toolrun.sandbox.bwrap import bwrap_argv, folders, seccomp_program_fd
from toolrun.sandbox.mounts import MountPlan, held_placeholders, plan_mounts
from toolrun.sandbox.proxy import DomainPolicy, DomainProxy
from toolrun.sandbox.seccomp import unix_socket_filter

if TYPE_CHECKING:
    from toolrun.sandbox.policy import SandboxPolicy

#: What each bind's path was when the sandbox was made: (device, inode, type, change
#: time or 0), or None.
Identity = tuple[tuple[int, int, int, int] | None, ...]
Launch = tuple[list[str], Mapping[str, str], tuple[int, ...]]


class SandboxSession:
    """The sandbox of one policy's run: made on the first call, again when its plan changes."""

    def __init__(self, policy: SandboxPolicy, bwrap: str) -> None:
        settings = policy.settings
        self.bwrap = bwrap
        self._roots = [str(policy.workspace), *(str(d) for d in policy.additional_directories)]
        self._allow_write = settings.allow_write
        self._deny_write = settings.deny_write
        self._deny_read = settings.deny_read
        self._allow_read = settings.allow_read
        self._hidden = frozenset(settings.hidden_env)
        self._program = b"" if settings.allow_all_unix_sockets else unix_socket_filter() or b""
        self._lock = threading.Lock()
        self._closed = False
        #: The plan the current sandbox was made from (None before the first call).
        self.plan: MountPlan | None = None
        self._identity: Identity = ()
        #: How many sandboxes this session made (the first on the first call).
        self.builds = 0
        self._errors: Path | None = None  # where the latest bubblewrap's own errors go
        self.proxy: DomainProxy | None = None
        if settings.allowed_domains is not None:
            path = str(folders().control / f"proxy-{next(_numbers)}.sock")  # (the folder: ours)
            domains = DomainPolicy.of(
                settings.allowed_domains,
                policy.denied_domains,
                settings.allow_private_hosts,
                settings.denied_domains,
            )
            self.proxy = DomainProxy(path, domains)
        self.side: _SideProcess | None = None
        self.inside: sandboxed.Inside | None = None

    # ------------------------------------------------------------------ per call

    def enter(self) -> tuple[MountPlan, sandboxed.Inside]:
        """The plan of the call about to run, and the sandbox to run it in (made now if
        there is none yet, or again if the plan or what it binds changed)."""
        plan = held_placeholders.hold(
            plan_mounts(
                roots=self._roots,
                allow_write=self._allow_write,
                deny_write=self._deny_write,
                deny_read=self._deny_read,
                allow_read=self._allow_read,
                extra_writable=[str(folders().tmp)],
            )
        )
        identity = _identity(plan)
        with self._lock:
            if self._closed:
                raise ToolError("the sandbox of this run has ended")
            if self.side is None or self.inside is None:
                self.side = side_process(self._wrap(plan), self._errors_fd)
                self.inside = sandboxed.Inside(self.side, str(folders().cwd))
                self.builds = 1
            elif plan != self.plan or identity != self._identity:
                self.side.rewrap(self._wrap(plan))
                self.builds += 1
            self.plan, self._identity = plan, identity
            return plan, self.inside

    def launch(self, argv: list[str], cwd: Path, env: Mapping[str, str]) -> Launch:
        """The Bash tool's launcher: the command's environment in the sandbox. The command
        itself starts on the sandbox's side process (:data:`toolrun.reaper.sandboxed.current`);
        fail closed if that is not where it is about to start."""
        inside = sandboxed.current.get()
        if inside is None or inside is not self.inside:
            raise ToolError("a sandboxed command was about to start outside its sandbox")
        inner = {k: v for k, v in env.items() if k not in self._hidden}
        inner["TMPDIR"] = str(folders().tmp)
        if self.proxy is not None:
            proxy_env(inner)
        return list(argv), inner, ()

    @contextlib.contextmanager
    def tally(self) -> Iterator[list[str]]:
        """The proxy's refusals while the block runs (none without a proxy)."""
        if self.proxy is None:
            yield []
            return
        with self.proxy.tally() as seen:
            yield seen

    def start_failure(self) -> str | None:
        """Why the sandbox could not start (bubblewrap's own ``bwrap: ...`` line), if its
        side process is gone and that is what it said; None otherwise."""
        side, errors = self.side, self._errors
        if side is None or side.pid or errors is None:
            return None
        try:
            text = errors.read_text(errors="replace")
        except OSError:
            return None
        return next((line for line in text.splitlines() if line.startswith("bwrap: ")), None)

    # ------------------------------------------------------------------ the sandbox

    def _wrap(self, plan: MountPlan) -> Wrap:
        bwrap, program, proxy = self.bwrap, self._program, self.proxy
        where = folders()

        def wrap(argv: list[str]) -> tuple[list[str], list[int]]:
            fd: int | None = None
            if proxy is not None:
                # the bridge forks its forwarder, installs the filter on itself and becomes
                # the side process, which must leave the forwarder be: it is told its pid
                command = bridge_command(proxy.path, program, argv, tell_pid=True)
            else:
                fd = seccomp_program_fd(program) if program else None
                command = argv
            wrapped = bwrap_argv(
                bwrap,
                plan,
                cwd="/",  # (each command gets its own working directory)
                command=command,
                unreadable_file=where.unreadable_file,
                bind_files=[str(where.cwd)],
                seccomp_fd=fd,
                # toolrun's whole environment would be in /proc/1/environ; each command
                # gets its own (hidden variables removed) with its request
                clear_env=True,
            )
            return wrapped, [] if fd is None else [fd]

        return wrap

    def _errors_fd(self) -> int:
        """A new file for the bubblewrap about to start to write its errors to."""
        path = folders().control / f"bwrap-{os.getpid()}-{next(_numbers)}.err"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        old, self._errors = self._errors, path
        if old is not None:
            with contextlib.suppress(OSError):
                old.unlink()
        return fd

    def close(self) -> None:
        """End the sandbox (its side process exits, every process in it with it) and the
        proxy."""
        with self._lock:
            self._closed = True
            side, self.side = self.side, None
        if side is not None:
            side.close()
        if self.proxy is not None:
            self.proxy.close()
        if self._errors is not None:
            with contextlib.suppress(OSError):
                self._errors.unlink()


def _identity(plan: MountPlan) -> Identity:
    """What each path the plan binds is now, so that one replaced outside is noticed.

    A file or a masked or read-only folder is known by its inode and its change time (a
    new file may get the inode number just freed); a writable root or a pinned ``.git``
    by its inode alone: their change time moves with every file made in them.
    """
    found: list[tuple[int, int, int, int] | None] = []
    for paths, when in ((plan.writable, False), (plan.pinned, False), (plan.read_only, True),
                        (plan.unreadable_dirs, True), (plan.unreadable_files, True),
                        (plan.readable_again, False)):
        for path in paths:
            try:
                st = os.lstat(path)
            except OSError:
                found.append(None)
                continue
            found.append((st.st_dev, st.st_ino, stat.S_IFMT(st.st_mode),
                          st.st_ctime_ns if when else 0))
    return tuple(found)


# ------------------------------------------------------------------ one per policy

_sessions: dict[int, SandboxSession] = {}
_sessions_lock = threading.Lock()
_numbers = itertools.count(1)


def session_for(policy: SandboxPolicy, bwrap: str) -> SandboxSession:
    """The sandbox session of ``policy`` (one per run: a run has one policy), made on first
    use and ended when the policy is let go of (or toolrun exits)."""
    key = id(policy)
    with _sessions_lock:
        found = _sessions.get(key)
        if found is None:
            found = _sessions[key] = SandboxSession(policy, bwrap)
            weakref.finalize(policy, _end, key)
        return found


def end_session(policy: SandboxPolicy) -> None:
    """End ``policy``'s sandbox now (a later call makes a new one)."""
    _end(id(policy))


def _end(key: int) -> None:
    with _sessions_lock:
        found = _sessions.pop(key, None)
    if found is not None:
        found.close()

