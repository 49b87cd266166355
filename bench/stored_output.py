"""A Bash call that prints a lot: `toolrun exec` wall time and peak memory.

Run:  .venv/bin/python bench/stored_output.py [--mb 200] [--repeat 3] [--source DIR]

One `exec` of one Bash call printing ``--mb`` MB, in a fresh process each time, in
three set-ups: the journal off (the display trimmed, nothing stored), the journal on
with the default cap (64 MiB of it stored), and the journal on with a cap above the
output (all of it stored). Peak RSS comes from the kernel (wait4): it must not grow
with the output. ``--source DIR`` runs the toolrun package found in DIR instead (e.g.
the main checkout, for a before/after).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from journal import measure  # bench/journal.py: one timed run, peak RSS from wait4

SETUPS = {
    "journal off": (["--no-journal"], ""),
    "journal on, cap 64 MiB": ([], ""),
    "journal on, cap 4 GiB": ([], "toolrun:\n  maxStoredOutput: 4GiB\n"),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--source", type=Path, default=None)
    args = parser.parse_args()
    env = dict(os.environ)
    if args.source is not None:
        env["PYTHONPATH"] = str(args.source.resolve())
    size = args.mb * 1024 * 1024
    for label, (flags, extra) in SETUPS.items():
        walls, peaks = [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                ws = Path(tmp)
                (ws / "toolrun.yaml").write_text("permissions:\n  allow: [Bash]\n" + extra)
                command = f"yes 'one line of output, again and again' | head -c {size}"
                (ws / "plan.yaml").write_text(
                    f'calls:\n  - {{tool: Bash, input: {{command: "{command}"}}}}\n'
                )
                cmd = [sys.executable, "-m", "toolrun", "exec", "plan.yaml", *flags]
                try:
                    wall, peak = measure([*cmd, "--format", "jsonl"], ws, env)
                except SystemExit:  # an older toolrun without maxStoredOutput
                    break
                stored = sum(p.stat().st_size for p in ws.glob(".toolrun/runs/*/*.out"))
                walls.append(wall)
                peaks.append(peak)
        if not walls:
            print(f"{args.mb} MB, {label:<24} not supported by this toolrun")
            continue
        print(
            f"{args.mb} MB, {label:<24} median {statistics.median(walls):6.2f} s, "
            f"peak RSS {max(peaks):6.0f} MB, stored {stored / 1024 / 1024:6.1f} MiB"
        )


if __name__ == "__main__":
    main()
