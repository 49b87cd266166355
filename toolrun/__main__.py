"""``python -m toolrun``; :func:`run` also suits a console script.

``hook`` runs on every tool call of an agent's session: its warm path answers without
importing click (:mod:`toolrun.live.fastcli`); every other command, and whatever that
path does not read, is the click group's.
"""

from __future__ import annotations

import sys


def run() -> None:
    if sys.argv[1:2] == ["hook"]:
        from toolrun.live.fastcli import main as hook

        code = hook(sys.argv[2:])
        if code is not None:
            raise SystemExit(code)
    from toolrun.cli import main

    raise SystemExit(main(prog_name="toolrun"))


if __name__ == "__main__":
    run()
