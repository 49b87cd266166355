"""Reaper side processes inside a jail: one jail per kind per run, rebuilt when its masks
change, with a second side process once commands overlap.

The executor sets :data:`current` around a call it jails (judged read-only, a workspace
file command, or allowed by bypassPermissions); :func:`toolrun.reaper.run.run_command`
then starts the command on one of the jail's side processes instead of toolrun's own.
What the jails are: :mod:`toolrun.sandbox.jail`.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar
from typing import TYPE_CHECKING

from toolrun.reaper.link import Wrap, _SideProcess, side_process

if TYPE_CHECKING:  # (the sandbox modules load only once a run has a jail)
    from toolrun.sandbox.jail import JailPlan


#: The most side processes a jail starts commands on. A side process starts a command
#: with posix_spawn, a vfork: it waits until the command's process has been scheduled and
#: has exec'd, 0.1 ms on an idle machine and 0.5 ms on one whose cores the other commands
#: keep busy, and a command that ends meanwhile waits that long to be told. A second one
#: (started with the first when the run's calls may overlap, else once a command would
#: wait for the first) takes the other half: 1000 read-only commands at concurrency 4 on
#: two cores, 1.015 s against 1.053 s (medians of 12).
SIDES = 2


class Jail:
    """The jail of a run: its plan and the side processes started inside it, each in a
    bubblewrap of that plan."""

    def __init__(self, bwrap: str, plan: JailPlan) -> None:
        self.bwrap = bwrap
        self.plan = plan
        self.builds = 1  # how many jails were made (the first on first use)
        self._lock = threading.Lock()
        #: the first is started ahead of the first call, the others with it when the run's
        #: calls may overlap, else once they do (one call at a time never starts them)
        self._wrapper = self._wrap(plan)  # (each side process of the plan starts so)
        self.sides: list[_SideProcess] = [side_process(self._wrapper)]

    @property
    def side(self) -> _SideProcess:
        """The side process to start the next command on: one with no command running,
        else a new one (up to :data:`SIDES`), else the one running the fewest."""
        with self._lock:
            sides = self.sides
            for side in sides:
                if not side.running():
                    return side
            if len(sides) < SIDES:
                side = side_process(self._wrapper)
                sides.append(side)
                return side
            return min(sides, key=_SideProcess.running)

    def prestart(self, overlap: bool = False) -> None:
        """Start the side process the first command will take, and with ``overlap``
        (commands of the run will run side by side) the others too: started now, while
        toolrun decides the run and a core waits, not at the run's second command."""
        with self._lock:
            while overlap and len(self.sides) < SIDES:
                self.sides.append(side_process(self._wrapper))
            sides = list(self.sides)
        for side in sides:
            side.prestart()

    def lost(self) -> bool:
        """Whether a side process of this jail has ended (bubblewrap could not make it)."""
        return any(side.ended() for side in self.sides)

    @property
    def kind(self) -> str:
        return self.plan.kind

    @property
    def private_tmp(self) -> bool:
        """Whether the jail's commands get its private TMPDIR (all but the masks-only one,
        where the filesystem, the user's TMPDIR included, is writable as configured)."""
        return self.plan.kind != "masks"

    def close(self) -> None:
        """End the jail: its side processes exit and take every jailed process along."""
        for side in self.sides:
            side.close()

    def rebuild(self, plan: JailPlan) -> bool:
        """Use ``plan`` from the next call on; True if that makes a new jail (it differs)."""
        with self._lock:
            if plan == self.plan:
                return False
            self.plan = plan
            self.builds += 1
            self._wrapper = self._wrap(plan)
            for side in self.sides:
                side.rewrap(self._wrapper)
            return True

    def _wrap(self, plan: JailPlan) -> Wrap:
        from toolrun.sandbox.bwrap import folders, seccomp_program_fd
        from toolrun.sandbox.jail import jail_argv, jail_folders
        from toolrun.sandbox.seccomp import unix_socket_filter

        bwrap = self.bwrap
        # The side process needs no socket of its own: no Unix socket on the disk (an
        # SSH agent, Docker) is one connect away from a jailed command. (The masks-only
        # jail keeps them as configured: bypass runs the machine as it is.)
        program = unix_socket_filter() if plan.kind != "masks" else b""

        def wrap(argv: list[str]) -> tuple[list[str], list[int]]:
            fd = seccomp_program_fd(program) if program else None
            wrapped = jail_argv(
                bwrap,
                plan,
                jail_folders(),
                argv,
                unreadable_file=folders().unreadable_file,
                seccomp_fd=fd,
                own=(str(folders().control),),
            )
            return wrapped, [] if fd is None else [fd]

        return wrap


#: The jail the current call runs in (set by the executor around one Bash call).
current: ContextVar[Jail | None] = ContextVar("toolrun_jail", default=None)
