"""Start-up cost of `toolrun --help` and a TAB completion against `python -c pass`.

Run:  .venv/bin/python bench/startup.py [--runs 31]
Prints the median wall time of each and the ratio to the bare interpreter
(design budget: at most 5x).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _bytecode import compile_package


def median_wall(cmd: list[str], runs: int, env: dict[str, str] | None = None) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=31)
    args = parser.parse_args()
    compile_package()  # time toolrun as installed: from bytecode

    script = Path(sys.executable).parent / "toolrun"
    toolrun = [str(script)] if script.exists() else [sys.executable, "-m", "toolrun"]
    complete_env = {
        **os.environ,
        "_TOOLRUN_COMPLETE": "bash_complete",
        "COMP_WORDS": "toolrun va",
        "COMP_CWORD": "1",
    }
    # warm the .pyc caches
    median_wall([*toolrun, "--help"], 2)

    base = median_wall([sys.executable, "-c", "pass"], args.runs)
    rows = [
        ("python -c pass", base),
        ("toolrun --help", median_wall([*toolrun, "--help"], args.runs)),
        ("toolrun <TAB> (bash_complete)", median_wall(toolrun, args.runs, env=complete_env)),
        ("toolrun --version", median_wall([*toolrun, "--version"], args.runs)),
    ]
    print(f"median of {args.runs} runs each ({sys.executable})")
    for name, t in rows:
        print(f"  {name:32s} {t * 1000:7.1f} ms  {t / base:5.2f}x")
    worst = max(t for _, t in rows[1:]) / base
    print(f"worst ratio {worst:.2f}x (budget 5x): {'ok' if worst <= 5 else 'OVER BUDGET'}")


if __name__ == "__main__":
    main()
