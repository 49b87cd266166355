"""File diffs on the inputs that made difflib quadratic or worse (#27 item 8).

Run:  .venv/bin/python bench/diff.py [--repeat 3]

Each case times ``diff_metadata`` (what Edit, MultiEdit, Write, ApplyPatch and
``exec --dry-run --diff`` compute), then a real ``toolrun exec`` of a one-token Edit and
of ``--dry-run --diff`` in a 200 KB and a 600 KB file of identical lines (under difflib:
32 s and 368 s). The last cases are the worst ones for the aligner: lines that differ
everywhere, where the step budget (``MAX_ALIGN_STEPS``) ends the search and the changed
part is given as one change.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from toolrun.tools.builtins._diff import diff_metadata


def best(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def _diff_into(meta: dict[str, object], old: str, new: str) -> None:
    meta.update(diff_metadata("f", old, new))


def cases() -> list[tuple[str, str, str]]:
    out = []
    for size in (200_000, 600_000):
        old = "x\n" * (size // 2)
        middle = size // 4 * 2
        out.append((f"one token in {size // 1000} KB of identical lines", old,
                    old[:middle] + "y" + old[middle + 1 :]))
    same = "x\n" * 50_000
    out.append(("every 10th of 50,000 identical lines changed", same,
                "".join("y\n" if i % 10 == 0 else "x\n" for i in range(50_000))))
    out.append(("every line of 20,000 changed (budget)", "".join(f"a{i}\n" for i in range(20_000)),
                "".join(f"b{i}\n" for i in range(20_000))))
    big = "".join(f"line {i} {'y' * 40}\n" for i in range(1_000_000))
    out.append(("one line in a 50 MB file", big, big.replace("line 500000 ", "LINE 500000 ", 1)))
    return out


def toolrun_exec(size: int, dry_run: bool) -> float:
    """A real process, startup included (``--version`` alone is the floor)."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        half = "x\n" * (size // 4)
        (ws / "same.txt").write_text(half + "token\n" + half)
        plan = {"calls": [{"id": "e", "tool": "Edit",
                           "input": {"file_path": "same.txt", "old_string": "token",
                                     "new_string": "TOKEN"}}]}
        (ws / "plan.json").write_text(json.dumps(plan))
        args = [sys.executable, "-m", "toolrun", "exec", "plan.json", "--mode", "acceptEdits",
                "--no-journal", "--diff"] + (["--dry-run"] if dry_run else [])
        start = time.perf_counter()
        subprocess.run(args, cwd=ws, capture_output=True, check=True,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for name, old, new in cases():
        meta: dict[str, object] = {}
        seconds = best(args.repeat, functools.partial(_diff_into, meta, old, new))
        how = "omitted" if "diff_omitted" in meta else ("one change" if "diff_note" in meta else "shortest")
        print(f"{name:50} {seconds * 1000:8.1f} ms  ({how})")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "toolrun", "--version"], capture_output=True, check=True)
    print(f"{'toolrun --version (startup alone)':50} {(time.perf_counter() - start) * 1000:8.1f} ms")
    for size in (0, 200_000, 600_000):  # 0: a one-line file, the process's own cost
        for dry in (False, True):
            label = f"toolrun exec{' --dry-run' if dry else ''} --diff, {size // 1000} KB"
            took = best(1, functools.partial(toolrun_exec, size, dry))
            print(f"{label:50} {took * 1000:8.1f} ms  (whole process)")


if __name__ == "__main__":
    main()
