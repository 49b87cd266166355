"""Loading a big plan alone: CPU seconds of ``load_input``, whole and as each part of a split.

Run:  .venv/bin/python bench/load.py [--calls 100000] [--syntax json yaml] [--mix compound]
                                      [--runs 5] [--loads 3] [--against DIR]

Writes the plan as ``bench/check.py`` does (turns of 10 calls; issue 31's ``compound`` mix by
default) and times, in a fresh process per run (from bytecode, gc off as ``check`` runs),
``load_input`` of the whole plan and of each part of a two-process split (``check --jobs
auto``: each process builds only its own turns). Each process loads once first (imports,
tools made), then ``--loads`` times; the least CPU time of those is its figure. Prints the
median over ``--runs`` of each, and the CPU per call.

``--against DIR``: the same with DIR's toolrun, each run right after this one's (interleaved:
on a shared machine both see the same load), with the ratio of the medians. Both sides also
print a digest of what they loaded (every call's index, turn, id, tool, input, params and
location, the plan's name and turns): a speed change must not change it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _bytecode import compile_package
from check import write_plan

HERE = Path(__file__).resolve().parents[1]
SHAPES = ("whole", "part 1/2", "part 2/2")

# one run: load once (imports, tools made), then time the loads; CPU seconds and a digest
CHILD = """
import gc, hashlib, sys, time
from pathlib import Path
from toolrun.commands.check_parts import Part
from toolrun.plan.importers import load_input
from toolrun.tools import default_registry

path, shape, loads = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
registry = default_registry()
def load():
    select = None if shape == "whole" else Part(int(shape[5]) - 1, 2, validate=False)
    return load_input(path, registry, display=path.name, select=select)
gc.disable()
load()
times = []
for _ in range(loads):
    start = time.process_time()
    plan = load().plan
    times.append(time.process_time() - start)
digest = hashlib.sha256(repr((plan.name, plan.turns)).encode()).hexdigest()[:16]
print(min(times), len(plan), digest)
"""


def run(python: str, source: str, plan: Path, shape: str, loads: int) -> tuple[float, int, str]:
    """(least CPU seconds of a load, calls built, digest) of one fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = source
    # (from the plan's folder: -c puts the working directory first on sys.path)
    done = subprocess.run(
        [python, "-c", CHILD, str(plan), shape, str(loads)],
        env=env, capture_output=True, text=True, check=True, cwd=plan.parent,
    )  # fmt: skip
    cpu, calls, digest = done.stdout.split()
    return float(cpu), int(calls), digest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--syntax", nargs="+", choices=["json", "yaml"], default=["json", "yaml"])
    parser.add_argument("--mix", choices=["bench", "distinct", "all-distinct", "compound"],
                        default="compound")  # fmt: skip
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout, timed interleaved (A/B)")
    args = parser.parse_args()
    compile_package(args.against)
    sides = [("this", sys.executable, str(HERE))]
    if args.against is not None:
        other = args.against / ".venv" / "bin" / "python"
        python = str(other) if other.exists() else sys.executable
        sides.append((str(args.against), python, str(args.against)))
    print(f"load average {os.getloadavg()[0]:.2f}; {args.runs} runs of {args.loads} loads")
    with tempfile.TemporaryDirectory() as tmp:
        for syntax in args.syntax:
            plan = write_plan(Path(tmp) / f"plan.{syntax}", args.calls, syntax=syntax, mix=args.mix)
            for shape in SHAPES:
                cpu: dict[str, list[float]] = {label: [] for label, _, _ in sides}
                seen: dict[str, tuple[int, str]] = {}
                for _ in range(args.runs):
                    for label, python, source in sides:
                        took, calls, digest = run(python, source, plan, shape, args.loads)
                        cpu[label].append(took)
                        seen[label] = (calls, digest)
                medians = {label: statistics.median(v) for label, v in cpu.items()}
                for label, _, _ in sides:
                    calls, digest = seen[label]
                    ratio = ""
                    if label != "this":
                        ratio = f"  this/that {medians['this'] / medians[label]:.3f}"
                        ratio += "" if seen["this"] == seen[label] else "  DIFFERENT PLAN"
                    print(
                        f"{label:>20} {syntax:4} {shape:8} {calls:>7,} calls: cpu median "
                        f"{medians[label]:.3f} s (min {min(cpu[label]):.3f}), "
                        f"{medians[label] / calls * 1e6:.2f} us a call built, "
                        f"digest {digest}{ratio}"
                    )


if __name__ == "__main__":
    main()
