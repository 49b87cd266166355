"""What `toolrun check` costs a call outside the permission engine: the executor's dry run,
the marks ("depends on"), the records.

Run:  .venv/bin/python bench/check_path.py [--calls 20000] [--mix compound] [--repeat 5]
                                           [--against DIR]

A plan of the mix (``bench/check.py``'s) is loaded and decided in this process, as
``toolrun check --jobs 1`` decides it; CPU time (``time.process_time``) is taken for the
whole decision of the plan and, apart, for the permission engine's own decisions
(``PermissionEngine.decide``, timed around each call). Their difference, a call, is the
path around the engine this bench is for (issue 31: aim <= 25 us). Each repeat runs in a
fresh process from bytecode; with --against DIR the other checkout's run follows each of
this one's (interleaved), and the medians of both are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _bytecode import compile_package
from check import RULES, write_plan


def _one(plan: Path, ws: Path) -> dict[str, float]:
    """In this process: decide ``plan`` as check does; CPU seconds, total and engine's."""
    from toolrun.commands import check_decide
    from toolrun.commands.check import CheckRequest, check
    from toolrun.permissions import PermissionEngine

    spent = {"engine": 0.0, "decide": 0.0, "calls": 0.0}
    engine_decide = PermissionEngine.decide
    decide_plan = check_decide.decide_plan
    clock = time.process_time

    def timed_engine(self: PermissionEngine, *args: Any, **kwargs: Any) -> Any:
        t = clock()
        try:
            return engine_decide(self, *args, **kwargs)
        finally:
            spent["engine"] += clock() - t

    def timed_plan(*args: Any, **kwargs: Any) -> Any:
        t = clock()
        try:
            got = decide_plan(*args, **kwargs)
        finally:
            spent["decide"] += clock() - t
        spent["calls"] += len(got[1])
        return got

    PermissionEngine.decide = timed_engine  # type: ignore[method-assign]
    import toolrun.commands.check as check_module

    check_module.decide_plan = timed_plan  # type: ignore[assignment]
    check(CheckRequest([str(plan)], workspace=ws, jobs=1))
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--mix", default="compound",
                        choices=["bench", "distinct", "all-distinct", "compound"])  # fmt: skip
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--against", type=Path)
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # (a run: plan, workspace)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(Path(args.one[0]), Path(args.one[1]))))
        return
    compile_package(args.against)
    here = Path(__file__).resolve()
    sides = [("this checkout", {**os.environ, "PYTHONPATH": str(here.parents[1])})]
    if args.against is not None:
        sides.append((str(args.against), {**os.environ, "PYTHONPATH": str(args.against)}))
    for env in (e for _, e in sides):
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # from bytecode, as users run it
    got: dict[str, list[dict[str, float]]] = {label: [] for label, _ in sides}
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "toolrun.yaml").write_text(json.dumps({"permissions": RULES}) + "\n")
        plan = write_plan(ws / "plan.json", args.calls, syntax="json", mix=args.mix)
        for _ in range(args.repeat):
            for label, env in sides:
                out = subprocess.run(
                    [sys.executable, str(here), "--one", str(plan), str(ws)],
                    env=env, cwd=ws, capture_output=True, text=True, check=True,
                ).stdout  # fmt: skip
                got[label].append(json.loads(out.splitlines()[-1]))
    for label, runs in got.items():
        calls = runs[0]["calls"]
        decide = statistics.median(r["decide"] for r in runs)
        engine = statistics.median(r["engine"] for r in runs)
        around = statistics.median((r["decide"] - r["engine"]) for r in runs)
        print(f"{label}: {int(calls):,} calls ({args.mix}): deciding {decide / calls * 1e6:6.1f} "
              f"us/call, of which the engine {engine / calls * 1e6:6.1f}, around it "
              f"{around / calls * 1e6:6.1f} us/call (cpu, median of {len(runs)})")  # fmt: skip


if __name__ == "__main__":
    main()
