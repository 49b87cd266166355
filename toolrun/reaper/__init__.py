"""Process supervision: no process outlives the call that started it.

Bash and hook commands are started by a small side process (:mod:`toolrun.reaper.side`),
a child subreaper, so that whatever a command leaves running (a background job, a
``setsid`` daemon, a double fork) comes to it and is killed when the call ends, and
everything is killed when toolrun itself dies, even by SIGKILL. :mod:`toolrun.reaper.link`
talks to that process; :mod:`toolrun.reaper.run` runs one command to its end with its
output, timeout and clean-up.
"""

import sys


def raise_now(exc: BaseException) -> None:
    """For a signal handler that raises (``check`` turns Ctrl-C and SIGTERM into
    KeyboardInterrupt): raise ``exc`` where the program is, unless that is in the middle
    of reading the side process's answers, then as soon as they are kept
    (:func:`toolrun.reaper.link.raise_interrupt`). Not loaded, the link reads nothing."""
    link = sys.modules.get("toolrun.reaper.link")
    if link is None:
        raise exc
    link.raise_interrupt(exc)
