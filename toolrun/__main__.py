"""``python -m toolrun``; :func:`run` also suits a console script.

``hook`` runs on every tool call of an agent's session: its warm path answers without
importing click (:mod:`toolrun.live.fastcli`); every other command, and whatever that
path does not read, is the click group's.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # (typing's own: an import every hook call would pay)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: Commands that read nothing relative to the current directory.
_CWD_FREE = frozenset({"schema", "completions", "--help", "-h", "--version"})


def cwd_problem(args: list[str]) -> int | None:
    """Exit code (and a message on stderr) when the current directory is gone.

    Every command but the few above resolves the workspace, plans and journals from it:
    a deleted folder would surface as a traceback from deep inside. ``hook`` exits 1, a
    non-blocking error in Claude Code's protocol (2 would block the agent's call).
    """
    try:
        os.getcwd()
    except FileNotFoundError:
        if not args or args[0] in _CWD_FREE:
            return None
        sys.stderr.write(
            "toolrun: the current directory no longer exists (it was deleted or moved); "
            "cd into a folder that exists and run it again\n"
        )
        return 1 if args[0] == "hook" else 2
    return None


#: Commands that make too few dataclasses (a dozen) to pay for reading the code cache, and
#: ``hook``, whose warm path answers without importing :mod:`dataclasses` at all.
_LIGHT = frozenset({"--help", "-h", "--version", "hook"})


def light(args: list[str], environ: Mapping[str, str]) -> bool:
    """``--help``, ``--version``, ``hook`` or a TAB completion (``_TOOLRUN_COMPLETE``)."""
    return not args or args[0] in _LIGHT or "_TOOLRUN_COMPLETE" in environ


#: Container allocations between young-generation collections while a command starts
#: and runs (700 by default): importing the modules of an `exec` allocates some 150,000
#: objects that all live to the end, which the default walks again every few hundred
#: allocations (about 60 collections, 8 ms of a start-up of 200). A run sets its own.
STARTUP_GC_YOUNG = 100_000


def run() -> None:
    if not light(sys.argv[1:], os.environ):
        import gc

        gc.set_threshold(STARTUP_GC_YOUNG, *gc.get_threshold()[1:])
        # first: every dataclass of the command's modules then compiles its methods once
        from toolrun.dataclass_code import install

        install()
    problem = cwd_problem(sys.argv[1:])
    if problem is not None:
        raise SystemExit(problem)
    if sys.argv[1:2] == ["hook"]:
        from toolrun.live.fastcli import main as hook

        code = hook(sys.argv[2:])
        if code is not None:
            raise SystemExit(code)
    import toolrun.cli

    try:
        code = toolrun.cli.main(prog_name="toolrun")
    except SystemExit as done:
        if toolrun.cli.exit_at_once:
            exit_now(done.code)
        raise
    raise SystemExit(code)


def exit_now(code: object) -> None:
    """End the process with ``code`` as the interpreter's exit would (its atexit handlers
    run, stdout and stderr flushed), less freeing every object first: 0.1 s after a
    100,000-call check. Returns when it cannot (the code is a message, a thread still
    runs, a stream does not flush): the interpreter's exit then ends it, and reports it.
    Only after a command that leaves nothing else to finish (``toolrun.cli.exit_at_once``:
    ``check``, ``exec``); mypy does the like. Daemon threads (a jail keeper, idle workers)
    are ended with the process, as the interpreter's exit ends them; another thread still
    running keeps the interpreter's own exit, which waits for it."""
    import threading

    code = 0 if code is None else code
    if not isinstance(code, int) or not 0 <= code <= 255 or _waited_for(threading):
        return
    import atexit

    atexit._run_exitfuncs()  # (run once: the interpreter's exit, if it comes, has none left)
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:  # noqa: BLE001 - said as the interpreter says it (it flushes again)
        return
    os._exit(int(code))


def _waited_for(threading: Any) -> bool:
    """Whether a thread the interpreter's exit would wait for (not a daemon) still runs."""
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


if __name__ == "__main__":
    run()
