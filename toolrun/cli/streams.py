"""Standard streams that exist, whatever toolrun was started with.

Started with a closed stdin, stdout or stderr (``toolrun exec plan <&- >&- 2>&-``),
Python leaves ``sys.stdout`` None (a traceback at the first print), and worse, the next
file toolrun opens takes the free descriptor: the journal would become fd 1 and every
line printed would land in it, and a command's stdin would read it. So before anything
runs, each closed one of descriptors 0, 1 and 2 is opened on ``/dev/null`` (what a
closed stream gives: nothing to read, nowhere to write) and its ``sys`` stream made.
The run goes on as usual; its results are in the journal.
"""

from __future__ import annotations

import os
import sys

_STREAMS = (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w"))


def open_closed_streams() -> None:
    """Open each of descriptors 0-2 that is closed on /dev/null, and its sys stream."""
    for name, fd, mode in _STREAMS:
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: often fd
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            os.set_inheritable(fd, True)  # as a standard stream is, for commands started
        if getattr(sys, name) is None:
            # kept for the life of the process, as sys.stdout is: no context manager
            stream = open(fd, mode, closefd=False, errors="backslashreplace")  # noqa: SIM115
            setattr(sys, name, stream)
