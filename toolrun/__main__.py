from __future__ import annotations

import sys

if sys.argv[1:2] == ["hook"]:
    # every tool call of a session runs this: its warm path skips click (toolrun.live.fastcli)
    from toolrun.live.fastcli import main as _hook

    _code = _hook(sys.argv[2:])
    if _code is not None:
        raise SystemExit(_code)

from toolrun.cli import main

if __name__ == "__main__":
    raise SystemExit(main(prog_name="toolrun"))
