"""Hook concurrency: 20 calls, each with two independent PreToolUse hooks that sleep 0.1 s.

Run:  .venv/bin/python bench/hooks.py [--calls 20] [--sleep 0.1] [--repeat 3]

The calls are run one after another (like exclusive calls); the two hooks of
each call run concurrently, so the wall time should be about calls x sleep
(2.0 s), not 2 x calls x sleep (4.0 s). For reference the same hooks are also
run as a ``sequential: true`` group, which is what running them one after
another costs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from toolrun.config.models import (
    Config,
    HookCommand,
    HookMatcher,
    SettingSource,
    SourceKind,
)
from toolrun.hooks import HookRunner


def config(ws: Path, sleep: float, sequential: bool) -> Config:
    source = SettingSource(SourceKind.TOOLRUN, ws / "toolrun.yaml", 1, ws)
    hooks = tuple(
        HookCommand(command=f"sleep {sleep}; echo hook-{i} >/dev/null", timeout=30, source=source)
        for i in (1, 2)
    )
    return Config(
        workspace=ws,
        hooks=(HookMatcher("PreToolUse", "Bash", hooks, source, sequential=sequential),),
    )


async def run_calls(runner: HookRunner, calls: int) -> float:
    start = time.perf_counter()
    for i in range(calls):
        result = await runner.pre_tool_use("Bash", {"command": f"echo {i}"}, call_id=f"call-{i}")
        assert len(result.runs) == 2 and all(r.exit_code == 0 for r in result.runs)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--sleep", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        walls: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(args.repeat):
            for sequential in (False, True):
                runner = HookRunner(config(ws, args.sleep, sequential), run_id="bench")
                walls[sequential].append(anyio.run(run_calls, runner, args.calls))
    parallel = statistics.median(walls[False])
    serial = statistics.median(walls[True])
    ideal = args.calls * args.sleep
    print(f"{args.calls} calls x 2 hooks x sleep {args.sleep:g} s (median of {args.repeat}):")
    print(f"  concurrent hooks : {parallel:.2f} s wall  ({parallel / ideal:.2f}x calls x sleep "
          f"= {ideal:.1f} s)")
    print(f"  sequential group : {serial:.2f} s wall  ({serial / ideal:.2f}x; one after another)")
    print(f"  per-call hook overhead: {(parallel - ideal) / args.calls * 1000:.0f} ms")
    verdict = "ok" if parallel < 1.5 * ideal else "TOO SLOW: hooks do not overlap"
    print(f"  budget: concurrent < 1.5 x {ideal:.1f} s -> {verdict}")


if __name__ == "__main__":
    main()
