"""What the sandbox costs a Bash call, end to end through `toolrun exec`.

Run:  .venv/bin/python bench/sandbox.py [--calls 1000] [--repeat 3]

The same 1000 read-only Bash calls (one at a time, so each call's own run time
is clean) with and without `sandbox.enabled`, alternating, in one run. Prints
the median run time of a call each way, the median added cost per call
(budget <= 10 ms), and the wall-time ratio of the two runs; and, for scale,
what a bare ``bwrap --ro-bind / / --unshare-net true`` costs over
``bash -c true`` on this machine at the same time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLRUN = [str(Path(sys.executable).parent / "toolrun")]


def run(ws: Path, plan: Path) -> tuple[float, list[float]]:
    """Wall time of the run and each call's run time (ms)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [
            *TOOLRUN,
            "exec",
            str(plan),
            "--workspace",
            str(ws),
            "--format",
            "jsonl",
            "--max-concurrency",
            "1",
            "--no-journal",
        ],
        cwd=ws,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    failed = [r for r in results if r["status"] != "ok"]
    if proc.returncode != 0 or failed:
        raise SystemExit(
            f"toolrun exec failed ({proc.returncode}): {proc.stderr[-2000:]}{failed[:1]}"
        )
    return wall, [float(r["duration_ms"]) for r in results]


def floor(rounds: int = 200) -> float:
    """Median extra time of a bare bwrap over bash, measured interleaved (ms)."""
    bare, boxed = [], []
    for _ in range(rounds):
        for argv, into in (
            (["bash", "-c", "true"], bare),
            (["bwrap", "--ro-bind", "/", "/", "--unshare-net", "true"], boxed),
        ):
            start = time.perf_counter()
            subprocess.run(argv, check=True)
            into.append(time.perf_counter() - start)
    return (statistics.median(boxed) - statistics.median(bare)) * 1000


def workspace(root: Path, name: str, config: str, calls: int) -> tuple[Path, Path]:
    ws = root / name
    ws.mkdir()
    (ws / "toolrun.yaml").write_text(config)
    plan = ws / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "calls": [
                    {"tool": "Bash", "input": {"command": f"echo line-{i}"}} for i in range(calls)
                ]
            }
        )
    )
    return ws, plan


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        limit = f"toolrun:\n  maxCallsPerTurn: {args.calls}\n"
        bare = workspace(root, "bare", limit + "sandbox:\n  enabled: false\n", args.calls)
        boxed = workspace(
            root,
            "boxed",
            limit + "sandbox:\n  enabled: true\n  failIfUnavailable: true\n",
            args.calls,
        )
        walls: dict[str, list[float]] = {"bare": [], "boxed": []}
        calls: dict[str, list[float]] = {"bare": [], "boxed": []}
        for _ in range(args.repeat):
            for name, (ws, plan) in (("bare", bare), ("boxed", boxed)):
                wall, durations = run(ws, plan)
                walls[name].append(wall)
                calls[name].extend(durations)
    bwrap_ms = floor()
    bare_ms, boxed_ms = statistics.median(calls["bare"]), statistics.median(calls["boxed"])
    bare_wall, boxed_wall = statistics.median(walls["bare"]), statistics.median(walls["boxed"])
    print(f"{args.calls} read-only Bash calls, one at a time, {args.repeat} runs each way")
    print(f"  median call: {bare_ms:.2f} ms unsandboxed, {boxed_ms:.2f} ms sandboxed")
    print(f"  median added cost per call: {boxed_ms - bare_ms:.2f} ms (budget 10 ms)")
    print(
        f"  for scale: a bare `bwrap --ro-bind / / --unshare-net true` costs {bwrap_ms:.2f} ms "
        "more than `bash -c true` here"
    )
    print(
        f"  wall: {bare_wall:.2f} s unsandboxed, {boxed_wall:.2f} s sandboxed, "
        f"ratio {boxed_wall / bare_wall:.2f}x"
    )


if __name__ == "__main__":
    main()
