from __future__ import annotations

from toolrun.cli import main

if __name__ == "__main__":
    raise SystemExit(main(prog_name="toolrun"))
