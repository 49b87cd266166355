"""How fast Ctrl-C answers on `toolrun exec -` with a large backlog, and how much memory
the backlog costs.

Run:  .venv/bin/python bench/interrupt.py [--lines 200000] [--source DIR]

stdin is a file of ``--lines`` quick read-only Bash calls (so all of it is there at
once); once the first result is out, SIGINT is sent and the time until toolrun has
exited is measured, with its peak RSS (wait4). ``--source DIR`` runs the toolrun
package found in DIR instead (e.g. the main checkout, for a before/after).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--source", type=Path, default=None)
    args = parser.parse_args()
    env = dict(os.environ)
    if args.source is not None:
        env["PYTHONPATH"] = str(args.source.resolve())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "toolrun.yaml").write_text("permissions:\n  allow: [Bash]\n")
        calls = folder / "calls.jsonl"
        line = json.dumps({"tool": "Bash", "input": {"command": "echo hi"}}) + "\n"
        calls.write_text(line * args.lines)
        with calls.open("rb") as stdin:
            proc = subprocess.Popen(
                [sys.executable, "-m", "toolrun", "exec", "-", "--format", "jsonl"],
                cwd=folder,
                env=env,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            assert proc.stdout is not None
            proc.stdout.readline()
            time.sleep(1.0)  # let the backlog build up behind the running calls
            sent = time.perf_counter()
            proc.send_signal(signal.SIGINT)
            results = 1 + sum(1 for _ in proc.stdout)
            _, _, usage = os.wait4(proc.pid, 0)
            took = time.perf_counter() - sent
    print(
        f"{args.lines} lines on stdin: exited {took:.2f} s after SIGINT, "
        f"{results} results printed, peak RSS {usage.ru_maxrss / 1024:.0f} MB"
    )


if __name__ == "__main__":
    main()
