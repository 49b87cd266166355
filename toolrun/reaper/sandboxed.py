"""A reaper side process inside the user's sandbox: where a sandboxed call's commands start.

:func:`toolrun.sandbox.run.run_bash` sets :data:`current` around a sandboxed call;
:func:`toolrun.reaper.run.run_command` then starts the call's command on that sandbox's
side process instead of toolrun's own, with the Bash working-directory probe moved into
the folder the sandbox may write (:func:`inside_probe`) and read back from there with care.
What the sandbox is, and when it is made again: :mod:`toolrun.sandbox.session`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass

from toolrun.reaper.link import _SideProcess

#: The variable the Bash tool names its working-directory probe file in.
CWD_FILE_ENV = "TOOLRUN_CWD_FILE"


@dataclass(frozen=True, slots=True)
class Inside:
    """A sandbox's side process, and the folder its commands write their cwd probes to."""

    side: _SideProcess
    probes: str


def inside_probe(inside_folder: str, env: Mapping[str, str]) -> tuple[dict[str, str], str | None,
                                                                       str | None]:
    """``env`` with the probe file moved into ``inside_folder``; the inside and outside
    paths of the probe (None, None without one: then ``env`` itself, when it is a dict,
    as nothing changes in it)."""
    outside = env.get(CWD_FILE_ENV)
    if not outside:
        return (env if isinstance(env, dict) else dict(env)), None, None
    inner = dict(env)
    inside = os.path.join(inside_folder, os.path.basename(outside))
    inner[CWD_FILE_ENV] = inside
    return inner, inside, outside


#: The sandbox the current call runs in (set by the sandbox around one Bash call).
current: ContextVar[Inside | None] = ContextVar("toolrun_sandboxed", default=None)
